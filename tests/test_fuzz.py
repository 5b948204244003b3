"""Schema fuzzing: schemathesis generates requests from the OpenAPI schema of the running app (daphne on
the test database) for every operation and checks there is no 5xx and no response that violates the
schema.  A bounded number of examples per operation keeps it within CI time."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis.checks import content_type_conformance, not_a_server_error, response_schema_conformance

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
EXAMPLES = 10


def test_api_has_no_5xx_and_conforms(catalog, user, live_asgi):
    token = Token.objects.create(user=user).key
    schema = schemathesis.openapi.from_url(f"{live_asgi}/api/schema/?format=json")
    schema.config.update(headers={"Authorization": f"Token {token}"}, base_url=live_asgi)
    failures, tested = [], []
    for result in schema.get_all_operations():
        op = result.ok()
        if op.method.upper() == "DELETE" and op.path == "/api/token/":
            continue  # would revoke the fuzzer's own token; covered in test_workflows

        @given(case=op.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def check(case):  # type: ignore[no-untyped-def]
            case.call_and_validate(checks=CHECKS)

        try:
            check()
        except Unsatisfiable:
            continue  # e.g. the "<paper>/<experiment>" path key: slashes cannot be generated in a path segment
        except Exception as exc:  # noqa: BLE001 - collect every operation's failure, report them together
            failures.append(f"{op.method.upper()} {op.path}: {exc}")
        tested.append(f"{op.method.upper()} {op.path}")
    assert len(tested) >= 15, tested
    assert failures == [], "\n\n".join(failures)

"""REST API: catalog with schemas, run creation with validation errors naming field and bound, permissions."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.lab.models import Run, RunStatus
from apps.lab.runner import execute_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(catalog, user):
    c = APIClient()
    token = Token.objects.create(user=user)
    c.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return c


def test_catalog_endpoints(catalog):
    c = APIClient()
    papers = c.get("/api/papers/").json()
    assert any(p["slug"] == "demo" for p in papers["results"])
    exp = c.get("/api/experiments/demo/counter/").json()
    assert exp["id"] == "demo/counter"
    assert exp["schema"]["properties"]["a"] == {
        "type": "number",
        "default": 2.0,
        "description": "slope",
        "minimum": -10,
        "maximum": 10,
    }
    assert exp["presets"]["smoke"] == {"n_steps": 5}
    assert [p["kind"] for p in exp["panels"]] == ["line", "table", "figure"]


def test_create_requires_auth(catalog):
    r = APIClient().post("/api/runs/", {"experiment": "demo/counter"}, format="json")
    assert r.status_code in (401, 403)


@pytest.mark.parametrize(
    "payload,path,fragment",
    [
        ({"experiment": "demo/counter", "config": {"a": 11}}, ("config", "a"), "between -10 and 10"),
        ({"experiment": "demo/counter", "config": {"n_steps": 0}}, ("config", "n_steps"), "between 1 and 100000"),
        ({"experiment": "demo/counter", "config": {"weights": [0.9, 0.9]}}, ("config", "weights"), "sum to 1"),
        ({"experiment": "demo/counter", "config": {"zzz": 1}}, ("config", "zzz"), "unknown parameter"),
        ({"experiment": "demo/nope"}, ("experiment",), "unknown experiment"),
        ({"experiment": "demo/counter", "preset": "nope"}, ("preset",), "unknown preset"),
        ({"experiment": "demo/counter", "device": "tpu"}, ("device",), "valid choice"),
        ({"experiment": "demo/counter", "seed": -1}, ("seed",), "greater than or equal to 0"),
    ],
)
def test_invalid_configs_get_400_naming_field(api, payload, path, fragment):
    r = api.post("/api/runs/", payload, format="json")
    assert r.status_code == 400, r.content
    body = r.json()
    for part in path:
        body = body[part]
    assert fragment in (body if isinstance(body, str) else " ".join(map(str, body)))
    assert Run.objects.count() == 0  # nothing half-created


def test_create_with_preset_then_retrieve_series(api, django_capture_on_commit_callbacks, monkeypatch):
    dispatched = []
    monkeypatch.setattr("apps.lab.services.dispatch_run", lambda run: dispatched.append(run.pk))
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            "/api/runs/",
            {"experiment": "demo/counter", "preset": "smoke", "config": {"a": 3}, "seed": 7},
            format="json",
        )
    assert r.status_code == 201, r.content
    run = r.json()
    assert (
        run["status"] == "queued" and run["config"]["n_steps"] == 5 and run["config"]["a"] == 3.0 and run["seed"] == 7
    )
    assert dispatched == [run["id"]]
    execute_run(run["id"])
    got = api.get(f"/api/runs/{run['id']}/").json()
    assert got["status"] == "succeeded" and got["summary"]["last"] == 12.0
    series = api.get(f"/api/runs/{run['id']}/series/?keys=demo/y").json()["series"]["demo/y"]
    assert series["x"] == [0, 1, 2, 3, 4] and series["y"] == [0, 3, 6, 9, 12]
    listing = api.get("/api/runs/?experiment=demo/counter&status=succeeded").json()
    assert [r["id"] for r in listing["results"]] == [run["id"]]
    assert api.get("/api/runs/?status=failed").json()["results"] == []
    arts = api.get(f"/api/runs/{run['id']}/artifacts/").json()
    assert arts[0]["name"] == "result.txt"
    body = b"".join(api.get(arts[0]["url"]).streaming_content)
    assert body == b"last=12.0\n"


def test_series_downsampling_keeps_extremes(api, monkeypatch):
    monkeypatch.setattr("apps.lab.services.dispatch_run", lambda run: None)
    rid = api.post(
        "/api/runs/", {"experiment": "demo/counter", "config": {"n_steps": 2, "points_per_step": 50000}}, format="json"
    ).json()["id"]
    execute_run(rid)
    s = api.get(f"/api/runs/{rid}/series/?max_points=1000").json()["series"]["demo/y"]
    assert s["n"] == 100000 and len(s["x"]) <= 1000 and s["downsampled"] == "minmax"
    assert s["y"][0] == 0 and s["y"][-1] == 2.0 * 99999


def test_only_owner_or_staff_can_cancel_and_delete(api, other_user, monkeypatch, django_user_model):
    monkeypatch.setattr("apps.lab.services.dispatch_run", lambda run: None)
    rid = api.post("/api/runs/", {"experiment": "demo/counter"}, format="json").json()["id"]
    intruder = APIClient()
    intruder.force_authenticate(other_user)
    assert intruder.post(f"/api/runs/{rid}/cancel/").status_code == 403
    assert intruder.delete(f"/api/runs/{rid}/").status_code == 403
    assert api.post(f"/api/runs/{rid}/cancel/").json()["status"] == "cancelled"
    staff = APIClient()
    staff.force_authenticate(django_user_model.objects.create_user("root", password="x" * 10, is_staff=True))
    assert staff.delete(f"/api/runs/{rid}/").status_code == 204
    assert api.get(f"/api/runs/{rid}/").status_code == 404  # soft-deleted: hidden
    assert Run.objects.get(pk=rid).deleted_at is not None


def test_rerun_same_config_and_seed(api, monkeypatch):
    monkeypatch.setattr("apps.lab.services.dispatch_run", lambda run: None)
    rid = api.post(
        "/api/runs/", {"experiment": "demo/counter", "config": {"a": 1.25}, "seed": 11}, format="json"
    ).json()["id"]
    execute_run(rid)
    new = api.post(f"/api/runs/{rid}/rerun/").json()
    assert new["config"] == Run.objects.get(pk=rid).config and new["seed"] == 11
    execute_run(new["id"])
    assert Run.objects.get(pk=new["id"]).summary == Run.objects.get(pk=rid).summary
    assert Run.objects.get(pk=new["id"]).status == RunStatus.SUCCEEDED


def test_openapi_schema_has_experiment_config_schemas(catalog):
    r = APIClient().get("/api/schema/?format=json")
    assert r.status_code == 200
    schema = r.json()
    comp = schema["components"]["schemas"]["Config_demo__counter"]
    assert comp["properties"]["n_steps"]["maximum"] == 100000
    assert "/api/runs/{id}/cancel/" in schema["paths"]
    assert APIClient().get("/api/docs/").status_code == 200


def test_pages_render(catalog, client, user):
    assert client.get("/").status_code == 200
    page = client.get("/papers/demo/")
    assert page.status_code == 200 and b'name="counter-n_steps"' in page.content and b'max="100000"' in page.content
    client.force_login(user)
    bad = client.post(
        "/papers/demo/counter/run/",
        {
            "counter-n_steps": "0",
            "counter-a": "1",
            "counter-sleep": "0",
            "counter-points_per_step": "1",
            "counter-mode": "lines",
            "counter-weights": "0.5,0.5",
            "counter-seed": "0",
            "counter-device": "auto",
        },
    )
    assert bad.status_code == 400 and b"greater than or equal to 1" in bad.content
    assert client.get("/runs/").status_code == 200

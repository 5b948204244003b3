"""Research workflows: sweeps, export/import, find, quotas, tokens, purge, cancel grace."""

import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from apps.lab.declare import ValidationError
from apps.lab.exports import bundle, import_bundle
from apps.lab.models import Experiment, Run, RunStatus, SeriesChunk, Sweep
from apps.lab.reaper import reap_stale_runs
from apps.lab.runner import execute_run
from apps.lab.services import create_run, resolve_config
from apps.lab.sweeps import advance_sweep, create_sweep, expand, parse_axes

pytestmark = pytest.mark.django_db


@pytest.fixture
def exp(catalog):
    return Experiment.objects.get(paper__slug="demo", slug="counter")


@pytest.fixture
def no_dispatch(monkeypatch):
    sent = []
    monkeypatch.setattr("apps.lab.services.dispatch_run", lambda run: sent.append(run.pk))
    return sent


def test_sweep_axes_grid_and_ranges(exp):
    decl = exp.declaration
    grid, rand = parse_axes(
        decl, "a = 1, 2\nn_steps = range(2, 8, 2)\nsleep = linspace(0, 1, 3)  # comment\nseed = 4, 5"
    )
    assert grid == {"a": ["1", "2"], "n_steps": [2, 4, 6], "sleep": [0.0, 0.5, 1.0], "seed": ["4", "5"]} and rand == {}
    children = expand(decl, {"points_per_step": 3}, grid, rand)
    assert len(children) == 2 * 3 * 3 * 2
    assert {c["points_per_step"] for c, _ in children} == {3}
    assert {s for _, s in children} == {4, 5}
    assert (dict(decl.defaults(), a=2.0, n_steps=6, sleep=1.0, points_per_step=3), 5) in children
    grid, _ = parse_axes(decl, "a = logspace(0.01, 1, 3)")
    assert grid["a"] == pytest.approx([0.01, 0.1, 1.0])


def test_sweep_random_draws_stay_in_bounds(exp):
    decl = exp.declaration
    grid, rand = parse_axes(decl, "a = random(50)\nn_steps = random(50)\nmode = random(50)")
    children = expand(decl, {}, grid, rand, seed=1)
    assert len(children) == 50
    assert all(
        -10 <= c["a"] <= 10 and 1 <= c["n_steps"] <= 100_000 and c["mode"] in ("lines", "markers") for c, _ in children
    )
    assert len({c["a"] for c, _ in children}) == 50
    assert expand(decl, {}, grid, rand, seed=1) == children  # seeded


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("a = 1, 99", "between -10 and 10"),
        ("nope = 1", "unknown parameter"),
        ("a 1", "expected"),
        ("", "at least one"),
        ("n_steps = range(x)", "line 1"),
    ],
)
def test_bad_sweeps_create_nothing(exp, user, text, fragment):
    with pytest.raises(ValidationError) as e:
        create_sweep(exp, {}, text, owner=user)
    assert fragment in json.dumps(e.value.errors)
    assert Sweep.objects.count() == 0 and Run.objects.count() == 0


@override_settings(PAPERLAB={**__import__("django.conf").conf.settings.PAPERLAB, "MAX_SWEEP_SIZE": 5})
def test_sweep_size_cap(exp, user):
    with pytest.raises(ValidationError, match="limit is 5"):
        create_sweep(exp, {}, "seed = range(0, 6)", owner=user)
    assert Run.objects.count() == 0


def test_sweep_concurrency_cap_and_advance(exp, user, no_dispatch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        sweep = create_sweep(exp, {"n_steps": 3}, "a = 1, 2, 3, 4, 5", owner=user, concurrency=2)
    runs = list(sweep.runs.order_by("id"))
    assert len(runs) == 5 and no_dispatch == [runs[0].pk, runs[1].pk]
    assert advance_sweep(sweep.pk) == 0  # cap reached: nothing more
    execute_run(runs[0].pk)  # a child finishing frees a slot → the next child is dispatched
    assert no_dispatch == [runs[0].pk, runs[1].pk, runs[2].pk]
    assert sweep.counts()["succeeded"] == 1
    r = APIClient().get(f"/api/sweeps/{sweep.pk}/").json()
    assert [c["config"]["a"] for c in r["runs"]] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert r["runs"][0]["summary"]["last"] == 2.0


def test_sweep_api(exp, user, no_dispatch):
    c = APIClient()
    c.force_authenticate(user)
    r = c.post(
        "/api/sweeps/",
        {"experiment": "demo/counter", "preset": "smoke", "axes_text": "seed = 1, 2, 3", "concurrency": 1},
        format="json",
    )
    assert r.status_code == 201, r.content
    assert [x["seed"] for x in r.json()["runs"]] == [1, 2, 3] and all(
        x["config"]["n_steps"] == 5 for x in r.json()["runs"]
    )
    bad = c.post("/api/sweeps/", {"experiment": "demo/counter", "axes_text": "a = 100"}, format="json")
    assert bad.status_code == 400 and "a" in bad.json()


def test_export_csv_json_and_bundle_roundtrip(exp, user, django_user_model):
    run = create_run(exp, resolve_config(exp, {"n_steps": 4, "a": 0.5}), owner=user, seed=2, dispatch=False)
    run = execute_run(run.pk)
    c = APIClient()
    csv_text = c.get(f"/api/runs/{run.pk}/export/?fmt=csv&what=series").content.decode()
    assert csv_text.splitlines() == [
        "key,step,value",
        "demo/y,0.0,0.0",
        "demo/y,1.0,0.5",
        "demo/y,2.0,1.0",
        "demo/y,3.0,1.5",
    ]
    summary = c.get(f"/api/runs/{run.pk}/export/?fmt=csv&what=summary").content.decode()
    assert "last,1.5" in summary and "config.a,0.5" in summary
    table = c.get(f"/api/runs/{run.pk}/export/?fmt=csv&what=table&key=summary").content.decode()
    assert table.splitlines() == ["n,a,seed", "4,0.5,2"]
    full = json.loads(c.get(f"/api/runs/{run.pk}/export/?fmt=json").content)
    assert full["run"]["summary"] == run.summary and full["series"]["demo/y"]["y"] == [0, 0.5, 1.0, 1.5]
    assert c.get(f"/api/runs/{run.pk}/export/?fmt=xml").status_code == 400

    blob = c.get(f"/api/runs/{run.pk}/bundle/").content
    assert set(zipfile.ZipFile(io.BytesIO(blob)).namelist()) >= {"run.json", "chunks.json", "artifacts/result.txt"}
    copy = import_bundle(blob)
    assert copy.pk != run.pk and copy.status == RunStatus.SUCCEEDED and copy.source == "import"
    assert copy.config == run.config and copy.summary == run.summary and copy.environment == run.environment
    assert [v for ch in SeriesChunk.objects.filter(run=copy) for v in ch.values] == [0, 0.5, 1.0, 1.5]
    assert copy.artifacts.get(name="result.txt").file.read() == b"last=1.5\n"


def test_importrun_command(exp, tmp_path, capsys):
    run = execute_run(create_run(exp, resolve_config(exp, {"n_steps": 2}), dispatch=False).pk)
    path = tmp_path / "b.zip"
    path.write_bytes(bundle(run))
    call_command("importrun", str(path))
    assert "imported run" in capsys.readouterr().out
    assert Run.objects.filter(source="import").count() == 1


def test_find_by_tag_note_and_date_with_cursor_pagination(exp, user, no_dispatch):
    c = APIClient()
    c.force_authenticate(user)
    ids = [
        c.post(
            "/api/runs/",
            {"experiment": "demo/counter", "tags": ["fig2"] if i % 2 else [], "note": f"try {i}"},
            format="json",
        ).json()["id"]
        for i in range(5)
    ]
    assert (
        c.patch(f"/api/runs/{ids[0]}/", {"note": "the interesting one", "tags": ["keep"]}, format="json").status_code
        == 200
    )
    assert [r["id"] for r in c.get("/api/runs/?q=interesting").json()["results"]] == [ids[0]]
    assert sorted(r["id"] for r in c.get("/api/runs/?tag=fig2").json()["results"]) == [ids[1], ids[3]]
    today = timezone.now().date().isoformat()
    assert len(c.get(f"/api/runs/?created_after={today}").json()["results"]) == 5
    assert c.get("/api/runs/?created_after=notadate").status_code == 400
    page1 = c.get("/api/runs/?page_size=2").json()
    page2 = c.get(page1["next"]).json()
    assert len(page1["results"]) == 2 and "count" not in page1
    assert [r["id"] for r in page1["results"] + page2["results"]] == sorted(ids, reverse=True)[:4]


@override_settings(PAPERLAB={**__import__("django.conf").conf.settings.PAPERLAB, "MAX_QUEUED_RUNS_PER_USER": 2})
def test_quota_gives_429_and_creates_nothing(exp, user, no_dispatch):
    c = APIClient()
    c.force_authenticate(user)
    for _ in range(2):
        assert c.post("/api/runs/", {"experiment": "demo/counter"}, format="json").status_code == 201
    r = c.post("/api/runs/", {"experiment": "demo/counter"}, format="json")
    assert r.status_code == 429 and "queued runs" in r.json()["detail"]
    assert Run.objects.count() == 2


def test_token_obtain_and_revoke(user):
    c = APIClient()
    token = c.post("/api/token/", {"username": "alice", "password": "alice-password-1"}).json()["token"]
    c.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert c.get("/api/runs/").status_code == 200
    assert c.delete("/api/token/").status_code == 204
    assert c.get("/api/runs/").status_code in (401, 403)  # revoked token is refused


def test_soft_delete_restore_and_purge(exp, user, no_dispatch):
    run = create_run(exp, resolve_config(exp, {}), owner=user)
    run.transition(RunStatus.CANCELLED)
    c = APIClient()
    c.force_authenticate(user)
    assert c.delete(f"/api/runs/{run.pk}/").status_code == 204
    assert c.get(f"/api/runs/{run.pk}/").status_code == 404
    Run.objects.filter(pk=run.pk).update(deleted_at=None)  # staff restore (admin action)
    assert c.get(f"/api/runs/{run.pk}/").status_code == 200
    c.delete(f"/api/runs/{run.pk}/")
    call_command("purgeruns")
    assert not Run.objects.filter(pk=run.pk).exists()


def test_cancel_grace_period_terminates(exp):
    run = create_run(exp, resolve_config(exp, {}), dispatch=False)
    run.transition(RunStatus.RUNNING, heartbeat_at=timezone.now())
    Run.objects.filter(pk=run.pk).update(
        cancel_requested=True, cancel_requested_at=timezone.now() - timedelta(seconds=3600)
    )
    assert reap_stale_runs(3600) == [run.pk]
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and "grace" in run.progress_message


def test_pages_clone_annotate_workers(exp, client, user, no_dispatch):
    run = create_run(exp, resolve_config(exp, {"a": 7.5, "weights": [0.25, 0.75]}), owner=user, seed=42)
    page = client.get(f"/papers/demo/?clone={run.pk}").content.decode()
    assert 'value="7.5"' in page and 'value="0.25, 0.75"' in page and 'value="42"' in page
    client.force_login(user)
    client.post(f"/runs/{run.pk}/annotate/", {"tags": "a, b", "note": "hello"})
    run.refresh_from_db()
    assert run.tags == ["a", "b"] and run.note == "hello"
    assert client.get("/runs/?tag=a").status_code == 200
    r = client.post(
        "/papers/demo/counter/sweep/",
        {
            "counter-n_steps": "3",
            "counter-a": "1",
            "counter-sleep": "0",
            "counter-points_per_step": "1",
            "counter-mode": "lines",
            "counter-weights": "0.5,0.5",
            "counter-seed": "0",
            "counter-device": "auto",
            "axes_text": "a = 1, 2",
            "concurrency": "1",
        },
    )
    assert r.status_code == 302 and "/sweeps/" in r["Location"]
    assert client.get(r["Location"]).status_code == 200
    assert client.get("/workers/").status_code == 200


def test_login_form_is_rate_limited(client, user):
    from django.core.cache import cache

    cache.clear()
    codes = [client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code for _ in range(21)]
    assert codes[:20] == [200] * 20 and codes[20] == 429
    cache.clear()


@override_settings(PAPERLAB={**__import__("django.conf").conf.settings.PAPERLAB, "MAX_CONCURRENT_RUNS_PER_USER": 1})
def test_concurrent_quota(exp, user, no_dispatch):
    c = APIClient()
    c.force_authenticate(user)
    rid = c.post("/api/runs/", {"experiment": "demo/counter"}, format="json").json()["id"]
    Run.objects.get(pk=rid).transition(RunStatus.RUNNING)
    r = c.post("/api/runs/", {"experiment": "demo/counter"}, format="json")
    assert r.status_code == 429 and "running" in r.json()["detail"]


def test_compare_only_differing(exp, client, no_dispatch):
    a = create_run(exp, resolve_config(exp, {"a": 1}), dispatch=False)
    b = create_run(exp, resolve_config(exp, {"a": 2}), dispatch=False)
    full = client.get(f"/compare/?runs={a.pk},{b.pk}").content.decode()
    only = client.get(f"/compare/?runs={a.pk},{b.pk}&only_diff=1").content.decode()
    assert "<td>n_steps</td>" in full and "<td>n_steps</td>" not in only and "<td>a</td>" in only

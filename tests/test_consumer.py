"""The WebSocket consumer over the real Redis channel layer: snapshot on connect, then deltas."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from apps.lab.models import Experiment, Run
from apps.lab.runner import DBReporter
from apps.lab.services import create_run, resolve_config
from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


def _make_run() -> Run:
    from apps.lab.catalog import sync_catalog

    sync_catalog()
    exp = Experiment.objects.get(paper__slug="demo", slug="counter")
    run = create_run(exp, resolve_config(exp, {}), source="cli", dispatch=False)
    run.transition("running")
    return run


async def _recv_until(comm, kind, timeout=5.0):
    deadline = asyncio.get_event_loop().time() + timeout
    while True:
        msg = await comm.receive_json_from(timeout=max(0.1, deadline - asyncio.get_event_loop().time()))
        if msg["kind"] == kind:
            return msg


@pytest.mark.asyncio
async def test_snapshot_then_deltas():
    run = await sync_to_async(_make_run)()
    rep = DBReporter(run)

    def report_before():
        rep.series("demo/y", [0, 1, 2], [0.0, 1.0, 4.0])
        rep.table("summary", [{"a": 1}])
        rep.flush()

    await sync_to_async(report_before)()
    comm = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")]
    )
    connected, _ = await comm.connect()
    assert connected
    snap = await comm.receive_json_from(timeout=5)
    assert snap["kind"] == "snapshot" and snap["state"]["status"] == "running"
    assert snap["series"]["demo/y"]["x"] == [0, 1, 2] and snap["series"]["demo/y"]["y"] == [0.0, 1.0, 4.0]
    assert snap["tables"]["summary"]["rows"] == [{"a": 1}]

    def report_after():
        rep.series("demo/y", [3, 4], [9.0, 16.0])
        rep.progress(0.5, "half")
        rep.log("hello")
        rep.flush()

    await sync_to_async(report_after)()
    pts = await _recv_until(comm, "points")
    assert pts["data"][0]["key"] == "demo/y" and pts["data"][0]["x"] == [3, 4] and pts["data"][0]["seq"] > snap["seq"]
    log = await _recv_until(comm, "log")
    assert log["data"]["message"] == "hello"
    prog = await _recv_until(comm, "progress")
    assert prog["data"]["progress"] == 0.5
    await comm.disconnect()


@pytest.mark.asyncio
async def test_unknown_run_is_refused_and_foreign_origin_rejected():
    await sync_to_async(_make_run)()
    comm = WebsocketCommunicator(
        application, "/ws/runs/999999/", headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")]
    )
    connected, _ = await comm.connect()
    assert not connected
    comm = WebsocketCommunicator(
        application, "/ws/runs/1/", headers=[(b"origin", b"http://evil.example"), (b"host", b"localhost")]
    )
    connected, _ = await comm.connect()
    assert not connected


def test_publish_swallows_channel_errors_but_not_the_soft_time_limit(monkeypatch):
    """A broken channel layer never fails a run, but the soft time limit raised during a send reaches the runner."""
    from billiard.exceptions import SoftTimeLimitExceeded

    from apps.lab import events

    class Layer:
        def __init__(self, exc: BaseException) -> None:
            self.exc = exc

        async def group_send(self, group: str, message: dict) -> None:
            raise self.exc

    monkeypatch.setattr(events, "get_channel_layer", lambda: Layer(ConnectionError("redis is down")))
    events.publish(1, {"kind": "log", "seq": 1, "data": {}})  # logged, not raised
    monkeypatch.setattr(events, "get_channel_layer", lambda: Layer(SoftTimeLimitExceeded()))
    with pytest.raises(SoftTimeLimitExceeded):
        events.publish(1, {"kind": "log", "seq": 2, "data": {}})

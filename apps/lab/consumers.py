"""WebSocket consumer: one socket per run page.  On connect a snapshot from the database, then deltas."""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .events import group_name, snapshot
from .models import Run


class RunConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        run = await database_sync_to_async(self._visible_run)()
        if run is None:
            await self.close(code=4404)
            return
        # join the group first, then read the snapshot: deltas that race with it carry seq numbers
        # the client compares with the snapshot's, so nothing is lost or shown twice
        await self.channel_layer.group_add(group_name(self.run_id), self.channel_name)
        await self.accept()
        snap = await database_sync_to_async(snapshot)(run)
        await self.send_json(snap)

    def _visible_run(self) -> Run | None:
        # anyone may watch any run that is not deleted (runs are public to browse)
        return Run.objects.visible().select_related("experiment__paper").filter(pk=self.run_id).first()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "run_id"):
            await self.channel_layer.group_discard(group_name(self.run_id), self.channel_name)

    async def receive_json(self, content: dict, **kwargs) -> None:  # type: ignore[override,type-arg]
        if content.get("type") == "ping":
            await self.send_json({"kind": "pong"})

    async def run_event(self, message: dict) -> None:  # type: ignore[type-arg]
        await self.send_json(message["event"])

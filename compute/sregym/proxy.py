"""Fault sidecars: a Toxiproxy-like TCP proxy per service, all hosted by one mesh process.

``python -m compute.sregym.proxy --token T`` prints ``ADMIN <port>``. The admin API (token header
required; never exposed to agent tools) creates one listener per service, sets its replica
backends (round-robin) and its toxics (Toxiproxy semantics, Shopify/toxiproxy): ``latency_ms`` ±
``jitter_ms`` added before the request is forwarded, ``loss`` (probability the connection is
dropped), ``reset`` (every connection reset). Design choice: one process hosts every sidecar.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from typing import Any

from compute.sregym.app.httpio import HOST, serve

NO_UPSTREAM = b'{"error": "no healthy upstream"}'
REFUSED = b'{"error": "upstream connect error or disconnect/reset before headers. reset reason: connection refused"}'


def _reply(status: int, body: bytes) -> bytes:
    return f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except (ConnectionError, OSError):
            pass


class Sidecar:
    """One service's proxy: round-robin over ready replicas, with toxics."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name, self.rng = name, rng
        self.backends: list[int] = []
        self.toxics: dict[str, float] = {}
        self.rr = 0
        self.port = 0

    async def on_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        t = self.toxics
        if t.get("reset") or (t.get("loss", 0) and self.rng.random() < t["loss"]):
            writer.transport.abort()  # RST: the caller sees "connection reset by peer"
            return
        lat = t.get("latency_ms", 0) + t.get("jitter_ms", 0) * (2 * self.rng.random() - 1)
        if lat > 0:
            await asyncio.sleep(lat / 1000)
        if not self.backends:
            writer.write(_reply(503, NO_UPSTREAM))
            writer.close()
            return
        self.rr = (self.rr + 1) % len(self.backends)
        try:
            up_r, up_w = await asyncio.open_connection(HOST, self.backends[self.rr])
        except OSError:
            writer.write(_reply(502, REFUSED))
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))


async def main(token: str, seed: int) -> None:
    rng = random.Random(seed)
    cars: dict[str, Sidecar] = {}
    servers: list[Any] = []

    async def admin(method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        if headers.get("x-admin-token") != token:
            return 403, b'{"error": "forbidden"}'
        req = json.loads(body or b"{}")
        if path == "/admin/add":
            car = cars.get(req["name"])
            if car is None:
                car = cars[req["name"]] = Sidecar(req["name"], rng)
                srv = await asyncio.start_server(car.on_conn, HOST, 0, backlog=1024)
                servers.append(srv)
                car.port = srv.sockets[0].getsockname()[1]
            return 200, json.dumps({"port": car.port}).encode()
        car = cars.get(req.get("name", ""))
        if car is None:
            return 404, b'{"error": "no such proxy"}'
        if path == "/admin/backends":
            car.backends = [int(p) for p in req["ports"]]
        elif path == "/admin/toxics":
            car.toxics = {k: float(v) for k, v in req.get("toxics", {}).items() if v}
        return 200, json.dumps({"name": car.name, "backends": car.backends, "toxics": car.toxics}).encode()

    server, port = await serve(admin)
    print(f"ADMIN {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--token", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    asyncio.run(main(a.token, a.seed))

"""Minimal asyncio HTTP/1.1 server and client (stdlib only; one request per connection).

Design choice: the spec names FastAPI/uvicorn; a 100-line stdlib server keeps each service process
light on a shared 2-core machine. Handlers are never cancelled when the client gives up: abandoned
work keeps its slot, which is what makes retry storms metastable (Bronson et al., HotOS 2021).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

HOST = "127.0.0.1"
Handler = Callable[[str, str, dict[str, str], bytes], Awaitable[tuple[int, bytes]]]
REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error"}
REASONS |= {502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


class HttpError(Exception):
    """A failed call: ``kind`` ∈ {timeout, refused, reset, status}; ``status`` for HTTP errors."""

    def __init__(self, kind: str, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.kind, self.status = kind, status


async def _read_message(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(n) if n else b""
    return lines[0], headers, body


async def serve(handler: Handler, port: int = 0) -> tuple[asyncio.base_events.Server, int]:
    """Start a server on 127.0.0.1:port (0 = ephemeral); returns (server, bound port)."""

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            start, headers, body = await asyncio.wait_for(_read_message(reader), 5.0)
            method, path, _ = start.split(" ", 2)
            status, out = await handler(method, path, headers, body)
            writer.write(
                f"HTTP/1.1 {status} {REASONS.get(status, 'X')}\r\nContent-Length: {len(out)}\r\n"
                f"Content-Type: application/json\r\nConnection: close\r\n\r\n".encode()
                + out
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_conn, HOST, port, backlog=1024)
    return server, server.sockets[0].getsockname()[1]


async def request(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 1.0
) -> tuple[int, bytes]:
    """One HTTP request to 127.0.0.1:port; raises HttpError(timeout|refused|reset) on transport failure."""
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    hdr = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())

    async def go() -> tuple[int, bytes]:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            writer.write(
                f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: {len(data)}\r\n{hdr}\r\n".encode()
            )
            writer.write(data)
            await writer.drain()
            start, _, out = await _read_message(reader)
            return int(start.split(" ", 2)[1]), out
        finally:
            writer.close()

    try:
        return await asyncio.wait_for(go(), timeout)
    except TimeoutError as exc:
        raise HttpError("timeout", f"upstream request timeout after {timeout * 1000:.0f} ms") from exc
    except ConnectionRefusedError as exc:
        raise HttpError("refused", f"connect ECONNREFUSED 127.0.0.1:{port}") from exc
    except (ConnectionError, asyncio.IncompleteReadError, OSError, ValueError, IndexError) as exc:
        raise HttpError("reset", f"connection reset by peer ({type(exc).__name__})") from exc


def get_json_sync(port: int, path: str, timeout: float = 2.0, method: str = "GET", body: Any = None) -> Any:
    """Blocking JSON call for tools and tests (http.client)."""
    import http.client

    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        payload = None if body is None else json.dumps(body)
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw or b"null")
        except ValueError:
            return resp.status, raw.decode(errors="replace")
    finally:
        conn.close()

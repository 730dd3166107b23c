"""A byte relay between a TCP port and a Unix socket, to carry a connection across network
namespaces: a Unix socket is a file, reachable from any network namespace that shares the
mount namespace, so one relay listens inside a namespace of the tests' own and another
connects out to the API server on the host's loopback.

    python -m tests.infra.relay LISTEN CONNECT     # each tcp:HOST:PORT or unix:PATH
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def _opener(address: str) -> Callable[[], Awaitable[Streams]]:
    kind, _, rest = address.partition(":")
    if kind == "unix":
        return lambda: asyncio.open_unix_connection(rest)
    host, _, port = rest.rpartition(":")
    return lambda: asyncio.open_connection(host, int(port))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _serve(listen: str, connect: str) -> None:
    open_upstream = _opener(connect)

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await open_upstream()
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    kind, _, rest = listen.partition(":")
    if kind == "unix":
        server = await asyncio.start_unix_server(relay, rest)
    else:
        host, _, port = rest.rpartition(":")
        server = await asyncio.start_server(relay, host, int(port))
    print("listening", flush=True)  # the starter waits for this line
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], sys.argv[2]))

"""A TCP relay that can make one estimator slow: bytes from the client (the scheduler) to the server (the
member's karmada-scheduler-estimator) are held `delay` seconds while `slow` is set, so a gRPC call that starts
then stays open that long, exactly as a slow member estimator keeps Karmada's scheduler waiting. TLS passes
through untouched (the relay never reads what it carries)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator


class SlowLink:
    """`with SlowLink(target_port) as link:` relays host:link.port to 127.0.0.1:target_port (`host`: where the
    scheduler reaches it, the pods' gateway for a scheduler in pods)."""

    def __init__(self, target_port: int, delay: float = 20.0, host: str = "127.0.0.1") -> None:
        self.target_port = target_port
        self.host = host
        self.delay = delay
        self.slow = False
        self.port = 0
        self.held = 0  # client chunks held so far while slow (a call that reached the relay)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="slowlink", daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def __enter__(self) -> SlowLink:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _serve(self) -> asyncio.Server:
        return await asyncio.start_server(self._relay, self.host, 0)

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.close()
            return
        upstream = asyncio.ensure_future(self._pump(client_reader, server_writer, held=True))
        downstream = asyncio.ensure_future(self._pump(server_reader, client_writer, held=False))
        for task in (upstream, downstream):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({upstream, downstream}, return_when=asyncio.FIRST_COMPLETED)
        for task in (upstream, downstream):
            task.cancel()
        for writer in (client_writer, server_writer):
            writer.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, held: bool) -> None:
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while chunk := await reader.read(65536):
                if held and self.slow:
                    self.held += 1
                    await asyncio.sleep(self.delay)
                writer.write(chunk)
                await writer.drain()


@contextlib.contextmanager
def slow_link(target_port: int, delay: float = 20.0, host: str = "127.0.0.1") -> Iterator[SlowLink]:
    with SlowLink(target_port, delay, host) as link:
        yield link

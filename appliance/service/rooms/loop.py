"""nats-py's asyncio loop in one daemon thread of its own inside the threading-mode web process.

The press path never waits for it: :meth:`Loop.submit` hands a coroutine over and returns at once
(``call_soon_threadsafe``); :meth:`Loop.call` waits for a result (pages and pairing only, never the session).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Awaitable, Callable

log = logging.getLogger(__name__)


class Loop:
    def __init__(self, name: str = "svoyak-rooms") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, factory: Callable[[], Awaitable[Any]]) -> concurrent.futures.Future:
        """Run ``factory()`` on the loop; return its future without waiting. Errors are logged."""
        future = asyncio.run_coroutine_threadsafe(_logged(factory), self.loop)
        return future

    def call(self, factory: Callable[[], Awaitable[Any]], timeout_s: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(factory(), self.loop).result(timeout_s)

    def close(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)
        if not self._thread.is_alive() and not self.loop.is_closed():
            self.loop.close()  # its selector's sockets go with it


async def _logged(factory):
    try:
        return await factory()
    except asyncio.CancelledError:
        raise
    except Exception:  # a process edge: log and keep the loop serving
        log.exception("rooms task failed")
        raise

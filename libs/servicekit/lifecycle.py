"""A service process's life: logging, the event loop, and waiting for the signal to stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Coroutine
from typing import Any


async def until_stopped(stop: asyncio.Event | None = None) -> None:
    """Wait for SIGINT or SIGTERM (or for `stop`, which tests set)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """A service's process: log lines with time and source, one event loop running `main()`."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    asyncio.run(main())

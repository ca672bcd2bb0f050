"""Suspension signals out: webhooks to the game server, and the shoe's card stop.

Why a task of its own per URL: the writer only puts a notice on a queue and goes on, so
a slow or dead game server never delays a verdict; each URL gets every notice in order,
retried with exponential backoff. A notice that still fails after the last attempt is
reported back (the service journals it), never dropped silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import httpx

from station.live.config import SignalsConfig

log = logging.getLogger("station.live.signals")

#: Called when a notice could not be delivered: (url, notice, last error in words).
GiveUp = Callable[[str, dict[str, Any], str], None]


class WebhookSender:
    """Posts suspension notices to every configured URL, in order, with retries."""

    def __init__(self, config: SignalsConfig, give_up: GiveUp | None = None) -> None:
        self.config = config
        self._give_up = give_up
        self._queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._client: httpx.AsyncClient | None = None
        self.delivered = 0
        self.failed_attempts = 0  # POSTs that failed (each retried, or the last one)
        self.given_up = 0  # notices not delivered after every attempt

    def start(self) -> None:
        if not self.config.webhooks:
            return
        self._client = httpx.AsyncClient(timeout=self.config.webhook_timeout)
        for url in self.config.webhooks:
            q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            self._queues[url] = q
            self._tasks.append(asyncio.create_task(self._deliver(url, q), name=f"webhook {url}"))

    def failures(self) -> tuple[int, int]:
        """(failed attempts, notices given up) so far: for the metrics."""
        return self.failed_attempts, self.given_up

    def send(self, notice: dict[str, Any]) -> None:
        """Queue a notice for every URL (never blocks)."""
        for q in self._queues.values():
            q.put_nowait(notice)

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _deliver(self, url: str, q: asyncio.Queue[dict[str, Any]]) -> None:
        assert self._client is not None
        cfg = self.config
        while True:
            notice = await q.get()
            error = ""
            for attempt in range(cfg.webhook_attempts):
                if attempt:
                    await asyncio.sleep(min(cfg.webhook_backoff * 2 ** (attempt - 1), 30.0))
                try:
                    response = await self._client.post(url, json=notice)
                except httpx.HTTPError as exc:
                    error = f"{type(exc).__name__}: {exc}"
                else:
                    if response.is_success:
                        self.delivered += 1
                        break
                    error = f"HTTP {response.status_code}"
                self.failed_attempts += 1
                log.warning(
                    "webhook %s: attempt %d of %d failed (%s)",
                    url,
                    attempt + 1,
                    cfg.webhook_attempts,
                    error,
                )
            else:
                self.given_up += 1
                if self._give_up is not None:  # journaled, then logged as an error
                    self._give_up(url, notice, error)
                else:
                    log.error(
                        "webhook %s: gave up on %s after %d attempts (%s)",
                        url,
                        notice.get("id"),
                        cfg.webhook_attempts,
                        error,
                    )

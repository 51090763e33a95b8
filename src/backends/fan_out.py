"""Run one query per index or collection concurrently; fail as the first failure did.

Adapters that span several indexes (one per source) query them side by side. A Trio
nursery would wrap a failure in an ExceptionGroup; callers above ``backends/`` expect
our plain errors, so the first ``RetrievalMCPError`` cancels the rest and is re-raised
as itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import trio

from retrieval_mcp.errors import RetrievalMCPError

T = TypeVar("T")


async def query_each(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Await every call concurrently; results in call order."""
    if len(calls) == 1:
        return [await calls[0]()]
    results: dict[int, T] = {}
    failures: list[RetrievalMCPError] = []

    async def one(index: int, call: Callable[[], Awaitable[T]]) -> None:
        try:
            results[index] = await call()
        except RetrievalMCPError as exc:
            failures.append(exc)
            nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        for index, call in enumerate(calls):
            nursery.start_soon(one, index, call)
    if failures:
        raise failures[0]
    return [results[i] for i in range(len(calls))]

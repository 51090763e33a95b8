"""A small LRU of query embeddings.

Agents repeat themselves (the same query after an expand, a retry after a timeout);
a cache hit saves the encoder's few milliseconds on the hot path. Used only from the
Trio thread, so it needs no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._data: OrderedDict[str, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> V | None:
        value = self._data.get(key)
        if value is None:
            self.misses += 1
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return value

    def put(self, key: str, value: V) -> None:
        if self._capacity <= 0:
            return
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._capacity:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

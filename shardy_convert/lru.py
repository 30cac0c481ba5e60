"""A small bounded cache: the least recently used entry goes first when it is full.

Thread-safe (one lock per cache, held only inside each call): the plugin's conversions run
concurrently. What a miss costs is the caller's business: look up, compute outside any lock,
then `put`; two threads that miss the same key at once both compute it, and the later `put`
wins (the values are equal: each is what the key's program converts to).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most `size` entries; `get` and `put` make an entry the most recently used."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recently used), None if absent."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def peek(self, key: K) -> V | None:
        """The value of `key` without using it (its place in the order stays), None if absent."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            self._evict()

    def setdefault(self, key: K, make: Callable[[], V]) -> V:
        """The value of `key`, made by `make()` (under the lock: keep it cheap) if absent."""
        with self._lock:
            if key not in self._entries:
                self._entries[key] = make()
            self._entries.move_to_end(key)
            value = self._entries[key]
            self._evict()
            return value

    def values(self) -> list[V]:
        """The values, least recently used first."""
        with self._lock:
            return list(self._entries.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _evict(self) -> None:
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

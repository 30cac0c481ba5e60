"""The one small LRU cache (`shardy_convert.lru`) the plugin's caches and the GSPMD boundary
cache share."""

from __future__ import annotations

import threading

from shardy_convert.lru import LRU


def test_the_least_recently_used_entry_goes_first():
    cache = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert cache.get("b") is None
    assert cache.values() == [1, 3]
    assert len(cache) == 2


def test_peek_leaves_the_order_as_it_is():
    cache = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1
    cache.put("c", 3)
    assert cache.peek("a") is None
    assert cache.values() == [2, 3]


def test_setdefault_makes_a_value_once():
    cache: LRU[str, dict] = LRU(4)
    made = cache.setdefault("k", dict)
    made["x"] = 1
    assert cache.setdefault("k", dict) is made


def test_concurrent_puts_keep_the_bound():
    cache = LRU(8)

    def fill(base: int) -> None:
        for k in range(200):
            cache.put(base + k, k)
            cache.get(base + k // 2)

    threads = [threading.Thread(target=fill, args=(1000 * t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 8

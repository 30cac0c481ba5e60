"""The plugin path's one cache, failure policy and counters, shared by `hook.Hook` (programs
handed to a compile function) and the wrapper's `Session` (programs the C wrapper hands over).

torch_xla retraces and recompiles the same graph every step (pytorch/xla#9755): each distinct
program (the caller's key: a hash of what the answer depends on) is converted once and kept in
a bounded LRU cache. It is thread-safe: conversions run concurrently, each in its own MLIR
context; the cache and counters are guarded by one lock.

Failure policy: `on_error="raise"` raises the ShardyConvertError; `"passthrough"` answers with
the program unconverted (the plugin compiles it with GSPMD, as before) and logs one warning
per distinct program. A bug of ours (any other exception) never reaches the host as itself: it
is an `InternalError` (a ShardyConvertError whose `__cause__` is the exception) that follows
the same policy, is counted among the failures and apart (`internal_errors`) and, passed
through, is logged with where it happened and its traceback, so that it can be reported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InternalError, ShardyConvertError, check_choice, plural, where
from ..lru import LRU

POLICIES = ("raise", "passthrough")
UNCONVERTED = "shardy-convert: compiling this program unconverted, with GSPMD: %s"
REFUSED = (
    "refused even with on_error='passthrough': compiled unconverted, with GSPMD, XLA aborts the "
    "process on it (CHECK !IsManual()): torch_xla makes this program to read a live manual "
    "tensor back; disable_manual_sharding it before reading it"
)
INTERNAL_ERROR = (
    "shardy-convert: internal error (a bug, please report it), compiling this program "
    "unconverted: %s"
)


@dataclass
class Counters:
    """What happened to the programs asked for, one answer per request (a program compiled
    twice is two answers), plus what the conversions cost."""

    converted: int = 0  # answered with a fresh conversion
    cached: int = 0  # answered with a conversion from the cache
    passed_through: int = 0  # answered unconverted, compiled with GSPMD (on_error="passthrough")
    failed: int = 0  # refused with the conversion error (on_error="raise")
    hits: int = 0  # answers from the cache, converted or not
    misses: int = 0  # conversions run: the distinct programs seen (while cached)
    failures: int = 0  # of those, the programs that could not be converted
    internal_errors: int = 0  # of those failures, the ones a bug of ours caused
    seconds: float = 0.0  # time spent converting (GSPMD's compiles for matching included)
    # match_gspmd_boundary (the wrapper): programs whose open values all got GSPMD's sharding,
    # programs where some stayed open for Shardy (logged once each), GSPMD's compiles' time.
    boundary_matched: int = 0
    boundary_fallbacks: int = 0
    boundary_seconds: float = 0.0
    user_meshes: int = 0  # conversions on a mesh the program created (the plugin wrapper)
    inferred_meshes: int = 0  # on the inferred mesh: none of the program's meshes fits
    # programs handed over with Shardy asked for that XLA compiles with GSPMD's propagation
    # (ir/gspmd_fallback.py: a program that was Shardy already, mixed with GSPMD's forms)
    gspmd_fallbacks: int = 0

    def __str__(self) -> str:
        bugs = (
            f" ({plural(self.internal_errors, 'internal error')})" if self.internal_errors else ""
        )
        meshes = ""
        if self.user_meshes or self.inferred_meshes:
            meshes = f" ({self.user_meshes} on the program's meshes, {self.inferred_meshes} not)"
        text = (
            f"{self.converted} converted{meshes}, {self.cached} from cache, "
            f"{self.passed_through} passed through, {self.failed} failed{bugs}, "
            f"{self.seconds * 1000:.1f} ms converting"
        )
        if self.gspmd_fallbacks:
            text += f"; {plural(self.gspmd_fallbacks, 'program')} compiled by GSPMD, not Shardy"
        if self.boundary_matched or self.boundary_fallbacks:
            text += (
                f"; GSPMD's boundary matched on {plural(self.boundary_matched, 'program')}, not on "
                f"{self.boundary_fallbacks} ({self.boundary_seconds * 1000:.0f} ms compiling)"
            )
        return text


@dataclass
class _Answer:
    value: Any  # the converted program, or what to compile instead when it failed
    error: ShardyConvertError | None = None


@dataclass
class Cache:
    """`answer(key, convert, unconverted)`: `convert()` once per key, its result for every
    request; a failure follows the policy (raise it, or answer `unconverted`, or what it
    returns if it is a function)."""

    on_error: str = "raise"
    size: int = 256
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("shardy_convert"))
    counters: Counters = field(default_factory=Counters)
    _entries: LRU[Hashable, _Answer] = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # the counters'

    def __post_init__(self):
        check_choice("on_error", self.on_error, POLICIES)
        self._entries = LRU(self.size)

    def answer(self, key: Hashable, convert: Callable[[], Any], unconverted: Any) -> Any:
        return self.lookup(key, convert, unconverted)[0]

    def lookup(
        self, key: Hashable, convert: Callable[[], Any], unconverted: Any
    ) -> tuple[Any, ShardyConvertError | None]:
        """`answer`'s value and, when it is `unconverted` (a program that could not be
        converted, passed through), the error; a refused program raises it."""
        entry = self._entries.get(key)
        hit = entry is not None
        if entry is None:
            entry = self._convert(convert, unconverted)
            self._entries.put(key, entry)
        self._count(entry, hit)
        if entry.error is not None and self._refuses(entry.error):
            raise entry.error.with_traceback(None)
        return entry.value, entry.error

    def _refuses(self, error: ShardyConvertError) -> bool:
        """The policy, except that a program known to kill the process when compiled
        unconverted (errors.ManualInputError) is refused under passthrough too."""
        return self.on_error == "raise" or getattr(error, "passthrough_aborts", False)

    def tally(self, **amounts: float) -> None:
        """Adds to counters by name: figures a conversion reports about itself."""
        with self._lock:
            for name, amount in amounts.items():
                setattr(self.counters, name, getattr(self.counters, name) + amount)

    def failed(self, key: Hashable) -> bool:
        """Whether the program of `key` is cached as one that could not be converted."""
        entry = self._entries.peek(key)
        return entry is not None and entry.error is not None

    def _convert(self, convert: Callable[[], Any], unconverted: Any) -> _Answer:
        start = time.perf_counter()
        try:
            answer = _Answer(convert())
        except ShardyConvertError as e:
            if self.on_error == "passthrough" and getattr(e, "passthrough_aborts", False):
                e.message = f"{e.message}; {REFUSED}"
            elif self.on_error == "passthrough":
                self.log.warning(UNCONVERTED, e)
            answer = _Answer(self._unconverted(unconverted), e)
        except Exception as e:  # a bug of ours: never the host's crash (see the module doc)
            if self.on_error == "passthrough":
                self.log.warning(INTERNAL_ERROR, where(e), exc_info=e)
            answer = _Answer(self._unconverted(unconverted), InternalError(e))
        with self._lock:
            self.counters.seconds += time.perf_counter() - start
        return answer

    def _unconverted(self, unconverted: Any) -> Any:
        """What to compile instead; `unconverted` may be a function making it (called only
        under passthrough, once per program)."""
        if self.on_error != "passthrough" or not callable(unconverted):
            return None if callable(unconverted) else unconverted
        return unconverted()

    def _count(self, entry: _Answer, hit: bool) -> None:
        c = self.counters
        with self._lock:
            c.hits += hit
            c.misses += not hit
            if entry.error is None:
                c.cached += hit
                c.converted += not hit
                return
            if not hit:
                c.failures += 1
                c.internal_errors += isinstance(entry.error, InternalError)
            if self._refuses(entry.error):
                c.failed += 1
            else:
                c.passed_through += 1

"""A pre-compile hook for PJRT plugins: GSPMD programs in, Shardy programs out, once each.

A plugin (or a wrapper around a PJRT client) calls the hook on every program it is asked to
compile. The hook takes the program in the form a plugin receives it (MLIR text, MLIR
bytecode, or the StableHLO portable artifact XLA's PJRT C-API client sends) and returns the
Shardy module in the same form; a program that already carries Shardy (natively, or as
`xla.sdy.*` round-trip attributes) passes through untouched.

    from shardy_convert.hook import Hook

    hook = Hook(on_error="passthrough")
    compile_and_load = hook.wrap(backend.compile_and_load)   # jaxlib's CPU client
    exe = compile_and_load(gspmd_text, devices, options)     # compiled with Shardy

torch_xla retraces and recompiles the same graph every step (pytorch/xla#9755): the hook keys
a bounded LRU cache on a hash of the program's bytes and the options, so each distinct program
is converted once. It is thread-safe: conversions run concurrently, each in its own MLIR
context; the cache and counters are guarded by one lock.

Failure policy: `on_error="raise"` raises ShardyConvertError; `"passthrough"` returns the
program unchanged (the plugin compiles it with GSPMD, as before) and logs one warning per
distinct program. The hook converts strictly: an uneven sharding (a dim its shard count does
not divide, which Shardy compiles to another program) is such a failure, never a warning.
A bug of ours (any other exception) never reaches the host as itself: it is an `InternalError`
(a ShardyConvertError whose `__cause__` is the exception) that follows the same policy, is
counted among the failures and apart (`stats.internal_errors`) and, passed through, is logged
with where it happened and its traceback, so that it can be reported.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import InternalError, ShardyConvertError, where

log = logging.getLogger("shardy_convert.hook")

POLICIES = ("raise", "passthrough")
INTERNAL_ERROR = (
    "shardy-convert: internal error (a bug, please report it), compiling this program "
    "unconverted: %s"
)


@dataclass
class Stats:
    """Counters since the hook was made: cache hits, conversions, failures, time converting."""

    hits: int = 0
    misses: int = 0
    failures: int = 0  # programs not converted (no Shardy form, or a bug of ours)
    internal_errors: int = 0  # of those failures, the ones a bug of ours caused
    seconds: float = 0.0

    def __str__(self) -> str:
        bugs = f" ({self.internal_errors} internal errors)" if self.internal_errors else ""
        return (
            f"{self.hits} hits, {self.misses} misses, {self.failures} failures{bugs}, "
            f"{self.seconds * 1000:.1f} ms converting"
        )


@dataclass
class _Entry:
    program: str | bytes
    error: ShardyConvertError | None = None


@dataclass
class Hook:
    """Converts programs before a plugin compiles them; see the module docstring.

    Options are those of `shardy_convert.convert` (`mesh`, `num_devices`, `validate`);
    `cache_size` bounds the number of distinct programs remembered.
    """

    on_error: str = "raise"
    cache_size: int = 256
    mesh: str | None = None
    num_devices: int | None = None
    validate: bool = False
    stats: Stats = field(default_factory=Stats)
    _cache: OrderedDict = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        if self.on_error not in POLICIES:
            raise ValueError(f"on_error must be one of {POLICIES}, not {self.on_error!r}")

    def __call__(self, program: str | bytes) -> str | bytes:
        """The Shardy form of `program`, in the form it came in."""
        key = self._key(program)
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None:
                self._cache.move_to_end(key)
                self.stats.hits += 1
        if entry is None:
            entry = self._convert(program)
            with self._lock:
                self._cache[key] = entry
                self.stats.misses += 1
                self.stats.failures += entry.error is not None
                self.stats.internal_errors += isinstance(entry.error, InternalError)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        if entry.error is not None and self.on_error == "raise":
            raise entry.error
        return entry.program

    def _key(self, program: str | bytes) -> str:
        data = program.encode() if isinstance(program, str) else program
        digest = hashlib.blake2b(data, digest_size=20)
        digest.update(repr((self.mesh, self.num_devices, self.validate)).encode())
        return digest.hexdigest()

    def _convert(self, program: str | bytes) -> _Entry:
        from ..converter import convert

        start = time.perf_counter()
        try:
            converted = convert(
                program,
                mesh=self.mesh,
                num_devices=self.num_devices,
                validate=self.validate,
                strict=True,  # an uneven sharding would compile to another program
            )
            result = _Entry(converted)
        except ShardyConvertError as e:
            if self.on_error == "passthrough":
                log.warning("shardy-convert: compiling this program unconverted: %s", e)
            result = _Entry(program, e)
        except Exception as e:  # a bug of ours: never the host's crash (see the module doc)
            result = _Entry(program, InternalError(e))
            if self.on_error == "passthrough":
                log.warning(INTERNAL_ERROR, where(e), exc_info=e)
        with self._lock:
            self.stats.seconds += time.perf_counter() - start
        return result

    def wrap(self, compile_fn: Callable) -> Callable:
        """`compile_fn(program, *args, **kwargs)` with the program converted first and the
        compile options (jaxlib `CompileOptions` or pypjrt's) set to the Shardy partitioner
        when the program now carries Shardy."""

        def compile_with_shardy(program, *args, **kwargs):
            converted = self(program)
            failed = converted is program and self._failed(program)
            if not failed:
                for value in (*args, *kwargs.values()):
                    _use_shardy(value)
            return compile_fn(converted, *args, **kwargs)

        compile_with_shardy.__wrapped__ = compile_fn
        return compile_with_shardy

    def _failed(self, program: str | bytes) -> bool:
        with self._lock:
            entry = self._cache.get(self._key(program))
        return entry is not None and entry.error is not None


def _use_shardy(options) -> None:
    """Turns on the Shardy partitioner in jaxlib's or pypjrt's compile options, if they are."""
    build = getattr(options, "executable_build_options", None)
    if build is not None and hasattr(build, "use_shardy_partitioner"):
        build.use_shardy_partitioner = True
    elif hasattr(options, "use_shardy_partitioner"):
        options.use_shardy_partitioner = True

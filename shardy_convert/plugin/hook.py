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

Each distinct program (a hash of its bytes and the options) is converted once; the cache,
the failure policy (`on_error`: "raise" or "passthrough") and the counters (`stats`) are
those of the plugin wrapper too (`cache.py`). The hook converts strictly: an uneven sharding
(a dim its shard count does not divide, which Shardy compiles to another program) is a
failure of the policy, never a warning.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cache import POLICIES, Cache, Counters

if TYPE_CHECKING:  # the converter (MLIR) is imported when the hook is made, not with it
    from ..converter import ConvertRequest

__all__ = ["POLICIES", "Hook"]

log = logging.getLogger("shardy_convert.hook")


@dataclass
class Hook:
    """Converts programs before a plugin compiles them; see the module docstring.

    Options are those of `shardy_convert.convert` (`mesh`, `num_devices`, `validate`), made
    into one `ConvertRequest` when the hook is made;
    `cache_size` bounds the number of distinct programs remembered; `stats` counts what
    happened (`cache.Counters`).
    """

    on_error: str = "raise"
    cache_size: int = 256
    mesh: str | None = None
    num_devices: int | None = None
    validate: bool = False
    _cache: Cache = field(init=False, repr=False)
    _request: ConvertRequest = field(init=False, repr=False)

    def __post_init__(self):
        from ..converter import ConvertRequest
        from ..options import parse_mesh
        from ..passes.import_shardings import ImportShardingsPass

        self._cache = Cache(self.on_error, self.cache_size, log)
        # strict: an uneven sharding would compile to another program
        importer = ImportShardingsPass(
            mesh=parse_mesh(self.mesh), num_devices=self.num_devices, strict=True
        )
        self._request = ConvertRequest(importer, validate=self.validate)

    @property
    def stats(self) -> Counters:
        return self._cache.counters

    def __call__(self, program: str | bytes) -> str | bytes:
        """The Shardy form of `program`, in the form it came in."""
        return self._cache.answer(self._key(program), lambda: self._convert(program), program)

    def _key(self, program: str | bytes) -> str:
        data = program.encode() if isinstance(program, str) else program
        digest = hashlib.blake2b(data, digest_size=20)
        digest.update(repr(self._request).encode())
        return digest.hexdigest()

    def _convert(self, program: str | bytes) -> str | bytes:
        return self._request.convert(program)

    def wrap(self, compile_fn: Callable) -> Callable:
        """`compile_fn(program, *args, **kwargs)` with the program converted first and the
        compile options (jaxlib `CompileOptions` or pypjrt's) set to the Shardy partitioner
        when the program now carries Shardy."""

        def compile_with_shardy(program, *args, **kwargs):
            converted = self(program)
            failed = converted is program and self._cache.failed(self._key(program))
            if not failed:
                for value in (*args, *kwargs.values()):
                    _use_shardy(value)
            return compile_fn(converted, *args, **kwargs)

        compile_with_shardy.__wrapped__ = compile_fn  # type: ignore[attr-defined]  # as wraps sets
        return compile_with_shardy


def _use_shardy(options) -> None:
    """Turns on the Shardy partitioner in jaxlib's or pypjrt's compile options, if they are."""
    build = getattr(options, "executable_build_options", None)
    if build is not None and hasattr(build, "use_shardy_partitioner"):
        build.use_shardy_partitioner = True
    elif hasattr(options, "use_shardy_partitioner"):
        options.use_shardy_partitioner = True

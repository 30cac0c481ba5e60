"""The PJRT plugin wrapper: a PJRT C-API plugin, built into this package, that wraps another
plugin and converts every program to Shardy before the real plugin compiles it.

A framework loads `library_path()` as its PJRT plugin with the environment of its `Settings`
set (`Settings.to_env()`, settings.py lists the variables; `environment()` and `shardy-convert
plugin-wrapper` print them), and, read by the C side only:

    SHARDY_CONVERT_HOOK       MODULE:FUNCTION called for each compile (default
                              shardy_convert.plugin.wrapper:on_compile); it returns the four
                              byte strings of the answer, and a fifth, the executable cache's
                              key (`executable_key`), or none: that compile is not cached
    SHARDY_CONVERT_EXECUTABLE_CACHE
                              how many executables the C side keeps to hand out again when an
                              identical compile comes (default 64; 0: none)

The C side (`_wrapper/pjrt_shardy_wrapper.c`) calls `on_compile(code, format, options)` in the
host process's interpreter for every `PJRT_Client_Compile`. It reads the program (a serialized
HloModuleProto, torch_xla's default, read by `formats.hlo` through XLA's importer in jaxlib, or
a portable artifact with torch_xla's XLA_STABLEHLO_COMPILE=1), converts it for the options'
number of partitions, and returns the Shardy program with the options set to
`use_shardy_partitioner=true`. Each distinct (program, options) pair is converted once
(torch_xla recompiles the same graphs).

The program comes from the framework in the same process: its bytes are read in-process, not
in the child process that protects the CLI from untrusted bytecode files.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from ..errors import ShardyConvertError
from . import compile_options
from .cache import Cache, Counters
from .dump_dir import DumpDir, dump_for
from .program import Converted, ProgramError, ProgramReport, convert, passthrough_program
from .settings import Settings
from .torch_xla.mesh_recorder import RECORDER

log = logging.getLogger("shardy_convert.wrapper")

LIBRARY = Path(__file__).resolve().parent / "_wrapper" / "libpjrt_shardy_wrapper.so"
ENV_HOOK = "SHARDY_CONVERT_HOOK"
ENV_LIBRARY = "SHARDY_CONVERT_WRAPPER_LIBRARY"
_CACHE_SIZE = 256
EXECUTABLE_KEY_SIZE = 32  # the C side's KEY_SIZE


def library_path() -> str:
    """The wrapper plugin's library (another build of it where SHARDY_CONVERT_WRAPPER_LIBRARY
    names one: `make test-asan`'s sanitizer build); ShardyConvertError saying why if it was not
    built."""
    library = Path(os.environ.get(ENV_LIBRARY) or LIBRARY)
    if library.is_file():
        return str(library)
    raise ShardyConvertError(
        f"the PJRT plugin wrapper is not built ({library} is missing): it is compiled when "
        "shardy-convert is installed, which needs a C compiler (cc) and PJRT's C API header "
        "(pjrt_c_api.h, from the xla-cpu-pjrt package: a build requirement on Linux x86-64, "
        "elsewhere SHARDY_CONVERT_PJRT_INCLUDE names a folder holding it); the install printed "
        "which was missing: fix that and reinstall (pip install --force-reinstall --no-deps "
        "shardy-convert, or make install)"
    )


def environment(plugin: str, settings: Settings | None = None) -> dict:
    """The environment variables that make the wrapper wrap `plugin` with `settings` (on_error,
    emit, match_gspmd_boundary, boundary_cache, mesh_names, dump_dir: see settings.py)."""
    return replace(settings or Settings(), plugin=plugin).to_env()


@dataclass
class Session:
    """The process's conversion state for its `Settings`: the policy, the cache and the
    counters (`cache.py`, the hook's too), and the dump directory (dump_dir.py) its settings
    name (ShardyConvertError if it cannot be made)."""

    settings: Settings = field(default_factory=Settings)
    dump: DumpDir | None = field(init=False, default=None)
    _cache: Cache = field(init=False, repr=False)

    def __post_init__(self):
        self._cache = Cache(self.settings.on_error, _CACHE_SIZE, log)
        self.dump = dump_for(self.settings.dump_dir)

    @property
    def counters(self) -> Counters:
        return self._cache.counters

    def compile(self, code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...]:
        """(program, format, options, device order) to hand the real plugin (the order as
        int32s, b"" for the caller's own); ShardyConvertError to refuse."""
        key = hashlib.blake2b(code + b"\0" + form + b"\0" + options, digest_size=20).digest()
        meshes = RECORDER.meshes() if self.settings.mesh_names else ()
        emit = cast(str, self.settings.emit)  # Settings normalized it: never None
        key += emit.encode() + str(len(meshes)).encode()  # a new mesh: again
        try:
            # passed through: the program itself, its callees' shardings on @main
            converted, error = self._cache.lookup(
                key,
                lambda: self._convert(code, form, options, meshes),
                lambda: passthrough_program(code, form.decode(), options),
            )
        except ShardyConvertError as e:
            if self.dump is not None:
                self.dump.program(code, form, None, _report(e), e)
            raise
        answer = converted if error is not None else converted.answer
        if self.dump is not None:
            report = _report(error) if error is not None else converted.report
            self.dump.program(code, form, answer, report, error)
        return answer

    def _convert(self, code: bytes, form: bytes, options: bytes, meshes) -> Converted:
        settings = self.settings
        converted = convert(
            code,
            form.decode(),
            options,
            # Settings normalized both: emit a form, the cache a directory or None
            emit=cast(str, settings.emit),
            match_gspmd_boundary=settings.match_gspmd_boundary,
            boundary_cache=cast("str | None", settings.boundary_cache),
            meshes=meshes,
            match_gspmd_propagation=settings.match_gspmd_propagation,
            plugin_version=wrapped_plugin_version(),
        )
        self._count(converted.report)
        return converted

    def _count(self, report: ProgramReport) -> None:
        """Counts what the conversion of one program found (each distinct program is converted
        once): the mesh it was converted on, logging why none of the program's meshes fits one
        whose mesh is inferred; what match-gspmd-boundary did, logging a fallback."""
        inferred = report.choice is not None and report.choice.mesh is None
        self._cache.tally(user_meshes=int(report.choice is not None and not inferred))
        self._cache.tally(inferred_meshes=int(inferred))
        if report.choice is not None and report.choice.mesh is None:  # inferred
            log.warning(
                "shardy-convert: graph %s fits none of the meshes the program created; "
                "converted on the mesh %s inferred from its shardings: %s",
                report.module,
                report.mesh,
                report.choice.why,
            )
        if report.boundary is not None:
            self._matched(report.name, report.boundary)
        self._count_fallback(report)

    def _count_fallback(self, report: ProgramReport) -> None:
        """Counts a program XLA will compile with GSPMD although it is handed over for Shardy,
        and logs where (once: each distinct program is converted once)."""
        self._cache.tally(gspmd_fallbacks=int(bool(report.gspmd_fallback)))
        if report.gspmd_fallback:
            log.warning(
                "shardy-convert: %s: XLA will compile it with GSPMD's propagation, not Shardy "
                "(it falls back to GSPMD on %s)",
                report.name,
                "; ".join(report.gspmd_fallback),
            )

    def _matched(self, name: str, outcome) -> None:
        """Counts what match-gspmd-boundary did to one program; a fallback is logged."""
        matched = outcome.reason is None
        self._cache.tally(
            boundary_seconds=outcome.seconds,
            boundary_matched=int(matched),
            boundary_fallbacks=int(not matched),
        )
        if not matched:
            log.warning(
                "shardy-convert: %s: GSPMD's boundary pinned on %d of %d open values, the "
                "others left to Shardy's propagation: %s",
                name,
                outcome.pinned,
                outcome.open,
                outcome.reason,
            )


def _report(error: ShardyConvertError | None) -> ProgramReport | None:
    """What was found of a program before its conversion failed (None: a bug of ours)."""
    return error.report if isinstance(error, ProgramError) else None


# --------------------------------------------------------------------------------------------
# The entry point the C side calls

_session: Session | None = None
_session_lock = threading.Lock()


def session() -> Session:
    """The process's session, made from the environment (`Settings.from_env`) on first use."""
    global _session
    with _session_lock:
        if _session is None:
            settings = Settings.from_env()
            try:
                _session = Session(settings)
            except ShardyConvertError as e:  # the dump directory: the run goes on without it
                log.warning("shardy-convert: %s", e)
                _session = Session(replace(settings, dump_dir=None))
        return _session


def configure(settings: Settings | None = None) -> Session:
    """Replaces the process's session (fresh cache and counters) with one for `settings`
    (on_error, emit, match_gspmd_boundary, boundary_cache, mesh_names, dump_dir: see
    settings.py). `dump_dir` (default: $SHARDY_CONVERT_DUMP_DIR) is where each distinct
    program is written (dump_dir.py); ShardyConvertError if it cannot be made."""
    return use_session(new_session(settings or Settings()))


def new_session(settings: Settings) -> Session:
    """A session for `settings` (see `configure`), not yet the process's."""
    return Session(settings)


def use_session(session: Session) -> Session:
    """Makes `session` the process's (what the C side's compiles go through)."""
    global _session
    with _session_lock:
        _session = session
        return _session


def on_compile(code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...] | str:
    """Called by the wrapper for each `PJRT_Client_Compile`: the (program, format, options,
    device order) to compile and the executable cache's key (`executable_key`), or a message
    the wrapper returns as the compile's PJRT error. Never raises."""
    try:
        answer = session().compile(code, form, options)
        return (*answer, executable_key(answer))
    except ShardyConvertError as e:
        return f"{e.message if e.location is None else e}"
    except Exception as e:  # reported as the compile's error, never a crash of the host
        return f"internal error in shardy-convert's plugin hook: {type(e).__name__}: {e}"


def executable_key(answer: tuple[bytes, ...]) -> bytes:
    """The C side's executable cache key of an answer: a digest of everything the plugin is
    handed (program, format, options, device order), so an identical compile gets the
    executable it got before whatever settings made the answer (docs/wrapper-internals.md)."""
    digest = hashlib.blake2b(digest_size=EXECUTABLE_KEY_SIZE)
    for part in answer:
        digest.update(struct.pack("<Q", len(part)))
        digest.update(part)
    return digest.digest()


def executable_cache_counts(library: str | None = None) -> dict[str, int]:
    """The C wrapper's executable cache in this process (the library loaded, or loaded here
    by its path): hits (compiles answered with an executable compiled before), misses
    (compiles that went to the plugin), evictions, and the executables it holds now."""
    import ctypes

    counts = (ctypes.c_long * 4)()
    ctypes.CDLL(library or library_path()).ShardyConvertExecutableCache(counts)
    return dict(zip(("hits", "misses", "evictions", "entries"), counts))


_wrapped_version = ""  # the first version the C side gave (a process wraps one plugin)


def wrapped_plugin_version() -> str:
    """The StableHLO version the plugin wrapped in this process reads up to (its PJRT attribute
    "stablehlo_current_version", read by the C side), "" where the wrapper is not loaded here,
    has not loaded a plugin, or the plugin names none. Never loads the wrapper or a plugin."""
    global _wrapped_version
    if not _wrapped_version:
        import ctypes

        try:
            library = ctypes.CDLL(library_path(), mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        except (OSError, ShardyConvertError):  # not loaded in this process, or not built
            return ""
        read = getattr(library, "ShardyConvertPluginStablehloVersion", None)
        if read is None:  # a build from before it
            return ""
        read.restype = ctypes.c_char_p
        _wrapped_version = (read() or b"").decode()
    return _wrapped_version


def relabel_program(code: bytes, form: bytes, order: bytes) -> tuple[bytes] | str:
    """Called by the wrapper for `PJRT_Executable_OptimizedProgram` of an executable compiled
    in another device order: the program with its shardings in the caller's partition ids."""
    from .optimized_program import relabel_program as relabel

    try:
        ids = list(struct.unpack(f"<{len(order) // 4}i", order))
        return (relabel(code, form.decode(), ids),)
    except ShardyConvertError as e:
        return f"cannot relabel the compiled shardings: {e.message}"
    except Exception as e:  # reported as the call's error, never a crash of the host
        return f"internal error relabelling the compiled shardings: {type(e).__name__}: {e}"


def caller_device_assignment(assignment: bytes, order: bytes) -> tuple[bytes] | str:
    """Called by the wrapper for `PJRT_LoadedExecutable_GetDeviceAssignment` of an executable
    compiled in another device order: the plugin's assignment in the caller's partition ids."""
    try:
        ids = struct.unpack(f"<{len(order) // 4}i", order)
        return (compile_options.caller_assignment(assignment, ids),)
    except ShardyConvertError as e:
        return f"cannot give the device assignment in the caller's order: {e.message}"
    except Exception as e:  # reported as the call's error, never a crash of the host
        return f"internal error in the device assignment: {type(e).__name__}: {e}"

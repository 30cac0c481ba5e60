"""The PJRT plugin wrapper: a PJRT C-API plugin, built into this package, that wraps another
plugin and converts every program to Shardy before the real plugin compiles it.

A framework loads `library_path()` as its PJRT plugin with these environment variables set
(`environment()` builds them; `shardy-convert plugin-wrapper` prints them):

    SHARDY_CONVERT_PLUGIN     the real plugin's library (required)
    SHARDY_CONVERT_ON_ERROR   raise (default): a program with no Shardy form fails to compile
                              with the located error; passthrough: it compiles with GSPMD
    SHARDY_CONVERT_EMIT       portable (default: a StableHLO portable artifact, Shardy in its
                              round-trip form, as JAX hands plugins), text or bytecode (sdy)
    SHARDY_CONVERT_HOOK       MODULE:FUNCTION called for each compile (default
                              shardy_convert.plugin.wrapper:on_compile)
    SHARDY_CONVERT_MATCH_GSPMD_BOUNDARY
                              1: each program's open outputs (and parameters) get the
                              shardings GSPMD compiles for them (passes/match_gspmd_boundary)
    SHARDY_CONVERT_BOUNDARY_CACHE
                              a directory keeping GSPMD's choices across processes
    SHARDY_CONVERT_DUMP_DIR   a directory: each distinct program the plugin compiles is
                              written there, with an index (dump_dir.py)

The C side (`_wrapper/pjrt_shardy_wrapper.c`) calls `on_compile(code, format, options)` in the
host process's interpreter for every `PJRT_Client_Compile`. It reads the program (a portable
artifact with torch_xla's XLA_STABLEHLO_COMPILE=1, else a serialized HloModuleProto, read by
`formats.hlo` through XLA's importer in jaxlib), converts it for the options' number of
partitions, and returns the Shardy program with the options set to
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
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InternalError, ShardyConvertError, UsageError
from ..lru import LRU
from . import compile_options
from .cache import POLICIES, Cache, Counters
from .dump_dir import DumpDir, dump_for
from .mesh_recorder import RECORDER
from .program import Matching, convert_program

log = logging.getLogger("shardy_convert.wrapper")

LIBRARY = Path(__file__).resolve().parent / "_wrapper" / "libpjrt_shardy_wrapper.so"
ENV_PLUGIN = "SHARDY_CONVERT_PLUGIN"
ENV_ON_ERROR = "SHARDY_CONVERT_ON_ERROR"
ENV_EMIT = "SHARDY_CONVERT_EMIT"
ENV_HOOK = "SHARDY_CONVERT_HOOK"
ENV_MATCH = "SHARDY_CONVERT_MATCH_GSPMD_BOUNDARY"
ENV_BOUNDARY_CACHE = "SHARDY_CONVERT_BOUNDARY_CACHE"
EMITS = ("portable", "text", "bytecode")
_CACHE_SIZE = 256


def library_path() -> str:
    """The wrapper plugin's library; ShardyConvertError saying why if it was not built."""
    if LIBRARY.is_file():
        return str(LIBRARY)
    raise ShardyConvertError(
        f"the PJRT plugin wrapper is not built ({LIBRARY} is missing): it is compiled when "
        "shardy-convert is installed, which needs a C compiler (cc); install one and reinstall "
        "(pip install --force-reinstall --no-deps shardy-convert, or make install)"
    )


def environment(
    plugin: str,
    *,
    on_error: str = "raise",
    emit: str | None = None,
    match_gspmd_boundary: bool = False,
    boundary_cache: str | None = None,
) -> dict:
    """The environment variables that make the wrapper wrap `plugin`."""
    check_choice("on_error", on_error, POLICIES)
    env = {ENV_PLUGIN: str(Path(plugin).resolve()), ENV_ON_ERROR: on_error}
    if emit is not None:
        check_choice("emit", emit, EMITS)
        env[ENV_EMIT] = emit
    if match_gspmd_boundary:
        env[ENV_MATCH] = "1"
    if boundary_cache is not None:
        env[ENV_BOUNDARY_CACHE] = str(boundary_cache)
    return env


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    """A UsageError unless `value` is one of `choices`."""
    if value not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}, not {value!r}")


@dataclass
class Session:
    """The process's conversion state: the policy, the cache and the counters (`cache.py`, the
    hook's too)."""

    on_error: str = "raise"
    emit: str = "portable"
    match_gspmd_boundary: bool = False
    boundary_cache: str | None = None
    mesh_names: bool = True  # convert on the meshes the program created (mesh_recorder.py)
    dump: DumpDir | None = None  # where each distinct program is written (dump_dir.py)
    _cache: Cache = field(init=False, repr=False)
    _facts: LRU[bytes, dict] = field(default_factory=lambda: LRU(_CACHE_SIZE), repr=False)

    def __post_init__(self):
        check_choice("emit", self.emit, EMITS)
        self._cache = Cache(self.on_error, _CACHE_SIZE, log)

    @property
    def counters(self) -> Counters:
        return self._cache.counters

    def compile(self, code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...]:
        """(program, format, options, device order) to hand the real plugin (the order as
        int32s, b"" for the caller's own); ShardyConvertError to refuse."""
        key = hashlib.blake2b(code + b"\0" + form + b"\0" + options, digest_size=20).digest()
        meshes = RECORDER.meshes() if self.mesh_names else ()
        key += self.emit.encode() + str(len(meshes)).encode()  # a new mesh: convert again
        matching = None
        if self.match_gspmd_boundary:
            matching = Matching(cache=self.boundary_cache, report=self._matched)
        facts = self._facts_of(key)
        try:
            answer = self._cache.answer(
                key,
                lambda: self._convert(code, form, options, matching, meshes, facts),
                (code, form, options, b""),
            )
        except ShardyConvertError:
            if self.dump is not None:
                self.dump.program(code, form, None, facts, self.on_error)
            raise
        if self.dump is not None:
            self.dump.program(code, form, answer, facts, self.on_error)
        return answer

    def _facts_of(self, key: bytes) -> dict:
        """What the conversion of `key`'s program found out (dump_dir.py writes it down)."""
        return self._facts.setdefault(key, dict)

    def _convert(self, code: bytes, form: bytes, options: bytes, matching, meshes, facts):
        try:
            answer = convert_program(
                code,
                form.decode(),
                options,
                emit=self.emit,
                matching=matching,
                meshes=meshes,
                facts=facts,
            )
        except Exception as e:  # for the dump's index; the cache applies the policy
            ours = isinstance(e, ShardyConvertError)
            facts["error"] = (
                (str(e) if e.location else e.message) if ours else InternalError(e).message
            )
            raise
        self._count_mesh(facts)
        return answer

    def _count_mesh(self, facts: dict) -> None:
        """Counts the mesh a program was converted on; logs (once: each program is converted
        once) why none of the program's meshes fits one whose mesh is inferred."""
        mesh_from = facts.get("mesh_from", "")
        self._cache.tally(
            user_meshes=int(mesh_from.startswith("user:")),
            inferred_meshes=int(mesh_from.startswith("inferred:")),
        )
        if mesh_from.startswith("inferred:"):
            log.warning(
                "shardy-convert: graph %s fits none of the meshes the program created; "
                "converted on the mesh %s inferred from its shardings: %s",
                facts.get("module"),
                facts.get("mesh"),
                mesh_from.removeprefix("inferred: "),
            )

    def _matched(self, name: str, outcome) -> None:
        """Counts what match-gspmd-boundary did to one program; a fallback is logged once
        (each distinct program is converted once)."""
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


# --------------------------------------------------------------------------------------------
# The entry point the C side calls

_session: Session | None = None
_session_lock = threading.Lock()


def session() -> Session:
    """The process's session, made from the environment on first use."""
    global _session
    with _session_lock:
        if _session is None:
            on_error = os.environ.get(ENV_ON_ERROR) or "raise"
            emit = os.environ.get(ENV_EMIT) or "portable"
            check_choice(ENV_ON_ERROR, on_error, POLICIES)
            check_choice(ENV_EMIT, emit, EMITS)
            try:
                dump = dump_for(None)
            except ShardyConvertError as e:  # the run goes on without its dump
                log.warning("shardy-convert: %s", e)
                dump = None
            _session = Session(
                on_error=on_error,
                emit=emit,
                match_gspmd_boundary=os.environ.get(ENV_MATCH, "") not in ("", "0"),
                boundary_cache=os.environ.get(ENV_BOUNDARY_CACHE) or None,
                dump=dump,
            )
        return _session


def configure(**settings) -> Session:
    """Replaces the process's session (fresh cache and counters) with `new_session(**settings)`
    (on_error, emit, match_gspmd_boundary, boundary_cache, mesh_names, dump_dir). `dump_dir`
    (default: $SHARDY_CONVERT_DUMP_DIR) is where each distinct program is written
    (dump_dir.py); ShardyConvertError if it cannot be made."""
    return use_session(new_session(**settings))


def new_session(
    *,
    on_error: str = "raise",
    emit: str | None = None,
    match_gspmd_boundary: bool = False,
    boundary_cache: str | None = None,
    mesh_names: bool = True,
    dump_dir: str | os.PathLike | None = None,
) -> Session:
    """A session with these settings (see `configure`), not yet the process's."""
    check_choice("on_error", on_error, POLICIES)
    check_choice("emit", emit or "portable", EMITS)
    return Session(
        on_error=on_error,
        emit=emit or "portable",
        match_gspmd_boundary=match_gspmd_boundary,
        boundary_cache=boundary_cache,
        mesh_names=mesh_names,
        dump=dump_for(dump_dir),
    )


def use_session(session: Session) -> Session:
    """Makes `session` the process's (what the C side's compiles go through)."""
    global _session
    with _session_lock:
        _session = session
        return _session


def on_compile(code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...] | str:
    """Called by the wrapper for each `PJRT_Client_Compile`: the (program, format, options,
    device order) to compile, or a message the wrapper returns as the compile's PJRT error.
    Never raises."""
    try:
        return session().compile(code, form, options)
    except ShardyConvertError as e:
        return f"{e.message if e.location is None else e}"
    except Exception as e:  # reported as the compile's error, never a crash of the host
        return f"internal error in shardy-convert's plugin hook: {type(e).__name__}: {e}"


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

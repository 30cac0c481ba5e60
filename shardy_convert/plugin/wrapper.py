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

The C side (`_wrapper/pjrt_shardy_wrapper.c`) calls `on_compile(code, format, options)` in the
host process's interpreter for every `PJRT_Client_Compile`. It reads the program (a portable
artifact with torch_xla's XLA_STABLEHLO_COMPILE=1, else a serialized HloModuleProto, converted
through jaxlib's `hlo_to_stablehlo`), converts it for the options' number of partitions, and
returns the Shardy program with the options set to `use_shardy_partitioner=true`. Each distinct
(program, options) pair is converted once (torch_xla recompiles the same graphs).

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

from ..errors import ShardyConvertError, UsageError
from . import compile_options
from .cache import POLICIES, Cache, Counters

log = logging.getLogger("shardy_convert.wrapper")

LIBRARY = Path(__file__).resolve().parent / "_wrapper" / "libpjrt_shardy_wrapper.so"
ENV_PLUGIN = "SHARDY_CONVERT_PLUGIN"
ENV_ON_ERROR = "SHARDY_CONVERT_ON_ERROR"
ENV_EMIT = "SHARDY_CONVERT_EMIT"
ENV_HOOK = "SHARDY_CONVERT_HOOK"
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


def environment(plugin: str, *, on_error: str = "raise", emit: str | None = None) -> dict:
    """The environment variables that make the wrapper wrap `plugin`."""
    check_choice("on_error", on_error, POLICIES)
    env = {ENV_PLUGIN: str(Path(plugin).resolve()), ENV_ON_ERROR: on_error}
    if emit is not None:
        check_choice("emit", emit, EMITS)
        env[ENV_EMIT] = emit
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
    _cache: Cache = field(init=False, repr=False)

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
        key += self.emit.encode()
        return self._cache.answer(
            key,
            lambda: convert_program(code, form.decode(), options, emit=self.emit),
            (code, form, options, b""),
        )


def convert_program(
    code: bytes, form: str, options: bytes, *, emit: str = "portable"
) -> tuple[bytes, bytes, bytes, bytes]:
    """(program, format, options, order) for the real plugin: `code` (a PJRT program of
    format "mlir" or "hlo") converted to Shardy for the partitions `options` ask for, the
    options set to the Shardy partitioner. A custom device order leaves the mesh for the
    device assignment (passes/iota_mesh.py): `order` (int32s) says which of the caller's
    partitions each partition of the compiled program is, b"" when they are the same.
    Raises ShardyConvertError naming the graph."""
    opts = compile_options.parse(options)
    if form == "hlo":
        code = _hlo_to_mlir(code)
    elif form != "mlir":
        raise ShardyConvertError(f"cannot convert a program of format {form!r} (mlir or hlo)")
    out, order = _convert_mlir(code, opts, emit)
    if order is None:
        return out, b"mlir", compile_options.rewrite(options), b""
    assignment = opts.device_assignment or tuple(range(opts.num_partitions))
    if len(order) != len(assignment):
        raise ShardyConvertError(
            f"the mesh orders {len(order)} devices, the compile assigns {len(assignment)}"
        )
    devices = [assignment[k] for k in order]
    new_options = compile_options.rewrite(options, devices=devices)
    return out, b"mlir", new_options, struct.pack(f"<{len(order)}i", *order)


def _hlo_to_mlir(code: bytes) -> bytes:
    """StableHLO bytecode of a serialized HloModuleProto. XLA's importer leaves the HLO ops
    StableHLO has no op for in the mhlo dialect (torch_xla's GELU: `mhlo.erf`), which a
    StableHLO context cannot read and a portable artifact cannot hold; jaxlib's
    `mhlo_to_stablehlo` turns each into XLA's own encoding of it, `stablehlo.custom_call
    @mhlo.erf {mhlo.attributes = {...}, mhlo.version = 1}`, which XLA's StableHLO reader (the
    plugin's) turns back into the HLO op."""
    from jaxlib import _jax

    try:
        mixed = bytes(_jax.mlir.hlo_to_stablehlo(code))
    except Exception as e:  # jaxlib raises bare errors for protos it cannot read
        raise ShardyConvertError(f"cannot read the HLO module proto: {e}") from None
    try:
        return bytes(_jax.mlir.mhlo_to_stablehlo(mixed))
    except Exception as e:  # an mhlo construct with no StableHLO encoding
        raise ShardyConvertError(f"cannot express the HLO module in StableHLO: {e}") from None


def _convert_mlir(
    code: bytes, opts: compile_options.CompileOptions, emit: str
) -> tuple[bytes, tuple[int, ...] | None]:
    from ..formats import module as formats

    form = formats.detect(code)
    version = formats.portable_version(code) if form == "portable" else _plugin_version()
    num_devices = opts.num_partitions * opts.num_replicas
    from ..ir.mlir import thread_context

    with thread_context() as ctx:
        mod = formats.load(code, ctx, trusted=True)
        name = _module_name(mod)
        try:
            order = _to_shardy(mod, opts)
            out = formats.save(mod, emit, version)
        except ShardyConvertError as e:
            raise ShardyConvertError(
                f"cannot convert {name} for the Shardy partitioner ({num_devices} devices): {e}"
            ) from None
    return (out if isinstance(out, bytes) else out.encode()), order


def _to_shardy(mod, opts: compile_options.CompileOptions) -> tuple[int, ...] | None:
    """Converts in place; returns the device order taken out of the mesh, if any."""
    from ..converter import convert_module, is_shardy
    from ..ir.bindings import ir
    from ..options import Options
    from ..passes import pipeline
    from ..passes.iota_mesh import DEVICE_ORDER

    if is_shardy(mod.operation):
        return None
    # strict: an uneven sharding (Shardy would compile another program) is refused, so the
    # plugin never gets a program known to compute differently; passthrough compiles the
    # original with GSPMD instead.
    options = Options(
        num_devices=opts.num_partitions * opts.num_replicas,
        allow_spmd_sharding_propagation_to_parameters=opts.propagate_to_parameters,
        allow_spmd_sharding_propagation_to_output=opts.propagate_to_output,
        strict=True,
    )
    convert_module(mod, options)  # import-shardings closes unannotated values as XLA does
    pipeline.run(mod, ["iota-mesh"], verify_each=False)
    attrs = mod.operation.attributes
    if DEVICE_ORDER not in attrs:
        return None
    order = tuple(ir.DenseI64ArrayAttr(attrs[DEVICE_ORDER]))
    del attrs[DEVICE_ORDER]
    return order


def _module_name(mod) -> str:
    from ..ir.bindings import ir

    attr = mod.operation.attributes
    if "sym_name" in attr:
        return f"graph {ir.StringAttr(attr['sym_name']).value}"
    return "the program"


def _plugin_version() -> str:
    """StableHLO version of portable artifacts made from HLO protos: the oldest jaxlib writes,
    which every plugin of the same generation reads."""
    from ..ir.bindings import stablehlo

    return stablehlo.get_minimum_version()


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
            _session = Session(on_error=on_error, emit=emit)
        return _session


def configure(*, on_error: str = "raise", emit: str | None = None) -> Session:
    """Replaces the process's session (fresh cache and counters) with these settings."""
    global _session
    check_choice("on_error", on_error, POLICIES)
    check_choice("emit", emit or "portable", EMITS)
    with _session_lock:
        _session = Session(on_error=on_error, emit=emit or "portable")
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

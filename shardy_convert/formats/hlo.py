"""XLA's own forms of a program, read as StableHLO through XLA's importer in jaxlib.

- HLO text, what `--xla_dump_to` writes (`module_0001.jit_f.before_optimizations.txt`): an
  `HloModule NAME, ..., num_partitions=8` line, then computations whose instructions carry
  `sharding={devices=[2,4]<=[8]}`.
- A serialized HloModuleProto: torch_xla's `_get_xla_tensors_hlo_proto`, what a PJRT plugin
  is handed as format "hlo". Also the messages that hold one in their field 1:
  HloModuleProtoWithConfig (PJRT's "hlo_with_config"; its config's field 5 is
  num_partitions), HloProto (what `--xla_dump_hlo_as_proto` writes, `*.hlo.pb`),
  HloUnoptimizedSnapshot, and HloSnapshot (field 1 an HloProto).

Detected by content, never by file name (`kind`). XLA's readers are not hardened against
hostile input (a failed CHECK aborts the process): untrusted input is read in a child process
(`formats.module.load`); `to_stablehlo` is for a framework's own programs (the PJRT plugin
wrapper) and for that child. The module gets `mhlo.num_partitions` where the input says it
(the text's header, the config), and HLO text its instructions' lines as locations, so that
errors point into the file the user has. XLA's importer keeps an HLO module's
`input_output_alias` (`mhlo.input_output_alias`) but drops its `buffer_donor` (the parameters
torch_xla's runtime and `jax.jit` donate without naming their output): each donor comes back
as `jax.buffer_donor = true` on its @main argument, as JAX writes it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import regex
from ..errors import ModuleError, ShardyConvertError, clip
from ..ir.bindings import ir
from ..ir.parse import new_context, parse_module, print_module

# Cold start: what only reading HLO runs (XLA's readers in xla.compat, `hlo_named` and the
# sharding walk it imports, the wire format) is imported where it runs; telling HLO from
# MLIR (`kind`, `looks_binary`) needs none of it, only a proto-looking input the wire format.
if TYPE_CHECKING:
    from . import hlo_named, protowire

TEXT = "HLO text"
PROTO = "HLO module proto"

# The header line XLA prints first; `//` comment lines may precede it.
_HEADER = regex.lazy(rb"\A(?:\s*//[^\n]*\n)*\s*HloModule[ \t]")
_NUM_PARTITIONS = regex.lazy(r"^HloModule [^\n]*?\bnum_partitions=(\d+)", re.M)
# `buffer_donor={ (1, {}), (7, {}) }` in the header: donated parameters (a tuple index after
# the number names a part of a tuple parameter, no @main argument of its own).
_BUFFER_DONOR = regex.lazy(r"^HloModule [^\n]*?\bbuffer_donor=\{([^\n]*?)\}\s*(?:,|$)", re.M)
_DONOR = regex.lazy(r"\((\d+),\s*\{\}\)")
BUFFER_DONOR = "jax.buffer_donor"
# Debug information XLA's own parser (0.7.1's) does not read back, and that would hide the
# instruction names: the stack-frame tables after the header, and each `metadata={...}`.
_FRAME_TABLE = regex.lazy(
    r"^(?:FileNames|FunctionNames|FileLocations|StackFrames)\n(?:\d+ [^\n]*\n)*", re.M
)
_METADATA = regex.lazy(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
_INSTRUCTION = regex.lazy(r"^[ \t]*(?:ROOT[ \t]+)?%?([\w.\-]+)[ \t]*=", re.M)
_NAME_LOC = regex.lazy(r'loc\("((?:[^"\\]|\\.)*)"\)')
_PARSE_ERROR = regex.lazy(r"was parsing (\d+):(\d+): error: ([^\n]*)")

_MODULE, _COMPUTATIONS = 1, 3  # HloModuleProto.name, .computations
_INSTRUCTIONS, _OPCODE = 2, 2  # HloComputationProto.instructions, HloInstructionProto.opcode
_OPCODE_NAME = regex.lazy(rb"[a-z][a-z0-9-]*")
_WRAPPED = 1  # the HloModuleProto (or HloProto) inside every wrapper message
_CONFIG, _CONFIG_NUM_PARTITIONS = 2, 5  # HloModuleProtoWithConfig.config, its num_partitions


def kind(data: str | bytes) -> str | None:
    """`TEXT`, `PROTO`, or None for anything else (MLIR text and bytecode, a dump)."""
    if _is_text(data):
        return TEXT
    if isinstance(data, str) or data[:1] != b"\n" or _looks_like_text(data):
        return None  # every HLO proto form starts with its field 1, a message (0x0a)
    try:
        _unwrap(data)
    except ValueError:
        return None
    return PROTO


def _is_text(data: str | bytes) -> bool:
    """What `kind` says is `TEXT`, from the header alone."""
    raw = data[:4096].encode("utf-8", "replace") if isinstance(data, str) else data
    return _HEADER().match(raw[:4096]) is not None


def looks_binary(data: str | bytes) -> bool:
    """Whether `data` starts as every HLO proto form does (field 1, a message) and is no UTF-8
    text: what may be a proto, which only a whole read can tell (`kind`, `proto_problem`)."""
    return isinstance(data, bytes) and data[:1] == b"\n" and not _looks_like_text(data)


def proto_problem(data: str | bytes) -> str | None:
    """Why binary `data` that starts like every HLO proto form (field 1, a message) is none,
    for an error message; None for anything else (text, bytecode, a real proto)."""
    if not isinstance(data, bytes) or data[:1] != b"\n" or _looks_like_text(data):
        return None
    try:
        _unwrap(data)
    except ValueError as e:
        return str(e)
    return None


def to_stablehlo(data: str | bytes) -> bytes:
    """StableHLO bytecode of HLO text or a (wrapped) HloModuleProto. Raises ModuleError
    (located at XLA's line:column for text) for input XLA's readers reject. Named (V3)
    shardings reach the module as written, also through an XLA that cannot read them all
    (`hlo_named`)."""
    from ..xla import compat
    from . import hlo_named

    hidden = hlo_named.Hidden() if hlo_named.needed() else None
    if _is_text(data):  # else a proto, which _module_proto reads whole (no second read: kind)
        text = _without_debug_info(_as_str(data))
        proto = _parse_text(text if hidden is None else _hide(text, hidden))
    else:
        proto = _module_proto(data)[0]
        if hidden is not None:
            proto = _hide_proto(proto, hidden)
    try:
        bytecode = compat.hlo_to_stablehlo(proto)
        if _uses_mhlo(bytecode):
            bytecode = compat.mhlo_to_stablehlo(bytecode)
    except Exception as e:  # jaxlib raises bare runtime errors for protos it cannot import
        raise ModuleError(f"cannot read the {PROTO}: {_first_line(e)}") from None
    if not hidden or not hidden.texts:
        return bytecode
    with new_context() as ctx:
        module = parse_module(bytecode, ctx)
        hlo_named.restore(module, hidden)
        return print_module(module, "bytecode")


def _uses_mhlo(bytecode: bytes) -> bool:
    """Whether XLA's importer left ops (or attributes, types) in the mhlo dialect, which only
    `mhlo_to_stablehlo` turns into StableHLO. Most programs have none, and that second step,
    a context and a bytecode round trip of its own, was 1.5 ms of 2.5 for a training step of
    the plugin path's soak (more than the import). Bytecode this reader does not understand
    takes the second step, as every module did before."""
    from .bytecode import BytecodeError, mentions

    try:
        return mentions(bytecode, "mhlo")
    except BytecodeError:
        return True


def _hide(text: str, hidden: hlo_named.Hidden) -> str:
    from . import hlo_named

    try:
        return hlo_named.hide_text(text, hidden)
    except ModuleError as e:
        raise ModuleError(f"cannot read the {TEXT}: {e.message}") from None


def _hide_proto(proto: bytes, hidden: hlo_named.Hidden) -> bytes:
    from . import hlo_named

    try:
        return hlo_named.hide_proto(proto, hidden)
    except (ValueError, ShardyConvertError) as e:
        raise ModuleError(f"cannot read the {PROTO}: {getattr(e, 'message', e)}") from None


def load(data: str | bytes, ctx: ir.Context) -> ir.Module:
    """The module of HLO text or a (wrapped) proto in `ctx`, with `mhlo.num_partitions` where
    the input says it; HLO text's instructions located at their lines. Runs XLA's readers in
    this process: only for input that may abort it (see the module docstring)."""
    module = parse_module(to_stablehlo(data), ctx)
    if kind(data) == TEXT:
        text = _as_str(data)
        located = _locate(print_module(module, "text", locations=True), text)
        module = parse_module(located, ctx)
        partitions = _NUM_PARTITIONS().search(text[: text.find("\n") + 1 or None])
        count = int(partitions.group(1)) if partitions else None
        header = text
    else:
        proto, count = _module_proto(data)
        header = _proto_header(proto)
    if count is not None and "mhlo.num_partitions" not in module.operation.attributes:
        i32 = ir.IntegerType.get_signless(32, ctx)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, count)
    _mark_donors(module, _donors(header))
    return module


def _proto_header(proto: bytes) -> str:
    """The header line XLA prints for a module proto ("" where jaxlib cannot print it)."""
    from ..xla import compat

    try:
        text = compat.hlo_module_from_proto(proto).to_string()
    except Exception:  # an old jaxlib without the binding: no donors read
        return ""
    return text[: text.find("\n") + 1 or None]


def _donors(text: str) -> list[int]:
    found = _BUFFER_DONOR().search(text[: text.find("\n") + 1 or None])
    return sorted({int(k) for k in _DONOR().findall(found.group(1))}) if found else []


def _mark_donors(module: ir.Module, donors: list[int]) -> None:
    """`jax.buffer_donor = true` on each donated argument of @main."""
    if not donors:
        return
    main = next(
        (op for op in module.body.operations if op.operation.name == "func.func"
         and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"),
        None,
    )  # fmt: skip
    if main is None:
        return
    main_op = main.operation
    count = len(main_op.regions[0].blocks[0].arguments)
    old = (
        [ir.DictAttr(d) for d in ir.ArrayAttr(main_op.attributes["arg_attrs"])]
        if "arg_attrs" in main_op.attributes
        else [ir.DictAttr.get({}) for _ in range(count)]
    )
    true = ir.BoolAttr.get(True)
    main_op.attributes["arg_attrs"] = ir.ArrayAttr.get(
        [
            ir.DictAttr.get(
                {d[i].name: d[i].attr for i in range(len(d))}
                | ({BUFFER_DONOR: true} if k in donors else {})
            )
            for k, d in enumerate(old)
        ]
    )


def _parse_text(text: str) -> bytes:
    from ..xla import compat

    try:
        return compat.hlo_text_to_proto(text)
    except Exception as e:  # jaxlib's runtime error, XLA's parser message inside
        m = _PARSE_ERROR().search(str(e))
        if m is None:
            raise ModuleError(f"cannot parse the {TEXT}: {_first_line(e)}") from None
        line, column, message = m.groups()
        raise ModuleError(
            f"cannot parse the {TEXT}: {clip(message, 200)}", location=f"{line}:{column}"
        ) from None


def _without_debug_info(text: str) -> str:
    """`text` without stack-frame tables and metadata, lines kept where they were (XLA's
    error locations are then the file's). Without `op_name` metadata, XLA's importer names
    each op's location after its instruction (`_locate`)."""
    text = _FRAME_TABLE().sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return _METADATA().sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _locate(module_text: str, hlo_text: str) -> str:
    """MLIR text with each `loc("INSTRUCTION")` replaced by that instruction's line:column in
    `hlo_text` (`loc("-":L:C)`, which errors print as `L:C`)."""
    where: dict[str, str] = {}
    for m in _INSTRUCTION().finditer(hlo_text):
        line = hlo_text.count("\n", 0, m.start()) + 1
        column = m.start(1) - (hlo_text.rfind("\n", 0, m.start(1)) + 1) + 1
        column -= hlo_text[m.start(1) - 1 : m.start(1)] == "%"  # at the `%`
        where.setdefault(m.group(1), f'loc("-":{line}:{column})')
    return _NAME_LOC().sub(lambda m: where.get(m.group(1), m.group(0)), module_text)


def _module_proto(data: str | bytes) -> tuple[bytes, int | None]:
    """The HloModuleProto inside `data` and the num_partitions of its config, if any. Raises
    ModuleError saying what is wrong with the wire format."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        return _unwrap(raw)
    except ValueError as e:
        raise ModuleError(f"cannot read the {PROTO}: {e}") from None


def _unwrap(data: bytes, depth: int = 0) -> tuple[bytes, int | None]:
    """(HloModuleProto, config num_partitions) of a module or of a message holding one in
    field 1 (two levels: HloSnapshot > HloProto > module). ValueError if it is neither."""
    from . import protowire

    entries = protowire.fields(data)
    inner = [v for n, w, v, _ in entries if n == _WRAPPED and w == 2]
    if depth < 2 and len(inner) == 1:
        try:
            module, _ = _unwrap(inner[0], depth + 1)
        except ValueError:
            pass
        else:
            return module, _config_partitions(entries)
    computations = [v for n, w, v, _ in entries if n == _COMPUTATIONS and w == 2]
    if not computations:
        raise ValueError("it holds no computations (not an HloModuleProto)")
    if not all(_is_utf8(v) for n, w, v, _ in entries if n == _MODULE and w == 2):
        raise ValueError("its name is not UTF-8 (not an HloModuleProto)")
    for computation in computations:
        _check_computation(computation)
    return data, None


def _check_computation(data: bytes) -> None:
    """ValueError unless `data` reads as an HloComputationProto: a name, and instructions
    (field 2) whose own name and opcode (fields 1, 2) are strings, the opcode an HLO one."""
    from . import protowire

    entries = protowire.spans(data)  # where the fields lie: a computation can be megabytes
    instructions = [(v, end) for n, w, _, v, end in entries if n == _INSTRUCTIONS and w == 2]
    names = (data[v:end] for n, w, _, v, end in entries if n == 1 and w == 2)
    if not instructions or not all(_is_utf8(name) for name in names):
        raise ValueError("a computation holds no instructions (not an HloModuleProto)")
    first = protowire.fields(data[slice(*instructions[0])])
    opcodes = [v for n, w, v, _ in first if n == _OPCODE and w == 2]
    if len(opcodes) != 1 or not _OPCODE_NAME().fullmatch(opcodes[0]):
        raise ValueError("an instruction has no opcode (not an HloModuleProto)")


def _config_partitions(entries: list[protowire.Field]) -> int | None:
    from . import protowire

    configs = [v for n, w, v, _ in entries if n == _CONFIG and w == 2]
    try:
        counts = [
            v
            for n, w, v, _ in protowire.fields(configs[-1])
            if n == _CONFIG_NUM_PARTITIONS and w == 0
        ]
    except (IndexError, ValueError):
        return None
    return counts[-1] if counts and counts[-1] > 0 else None


def _looks_like_text(data: bytes, head: int = 4096) -> bool:
    """Whether the first `head` bytes are UTF-8 (a multi-byte character cut at the end aside):
    text, not a proto, whose varints (every length past 127) are no UTF-8."""
    try:
        data[:head].decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start > head - 4 and e.reason == "unexpected end of data"
    return True


def _is_utf8(value: int | bytes) -> bool:
    try:
        bytes(value).decode("utf-8")
    except (TypeError, UnicodeDecodeError):
        return False
    return True


def _as_str(data: str | bytes) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModuleError(f"cannot read the {TEXT}: byte {e.start} is not UTF-8") from None


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return clip(lines[0] if lines else type(error).__name__, 200)

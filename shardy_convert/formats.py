"""The three forms a module arrives in, and back: MLIR text, MLIR bytecode, and the StableHLO
portable artifact (VHLO bytecode) that XLA's PJRT C-API client hands a plugin.

A portable artifact is MLIR bytecode whose producer string is `StableHLO_vX.Y.Z`; jaxlib
serializes and deserializes it (`jaxlib._jax.mlir`). Serializing a Shardy module exports
Shardy to its round-trip form (`xla.sdy.meshes` / `xla.sdy.sharding` frontend attributes next
to V2 `mhlo.sharding` strings), which plugins re-import.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from .errors import ModuleError
from .mlir import BYTECODE_MAGIC, is_bytecode, mlir_error, parse_module, print_module

FORMS = ("text", "bytecode", "portable")
_PORTABLE_PRODUCER = "StableHLO_v"


def producer(data: bytes) -> str | None:
    """The producer string of MLIR bytecode (`MLIR23.0.0git`, `StableHLO_v1.13.3`)."""
    if not is_bytecode(data):
        return None
    pos = len(BYTECODE_MAGIC)
    while pos < len(data) and data[pos] & 0x80 == 0 and pos == len(BYTECODE_MAGIC):
        pos += 1  # the bytecode version, one varint byte in every version so far
    end = data.find(b"\0", pos, pos + 64)
    return data[pos:end].decode("ascii", "replace") if end > 0 else None


def detect(data: str | bytes) -> str:
    """`text`, `bytecode` or `portable`."""
    if not is_bytecode(data):
        return "text"
    name = producer(data) or ""
    return "portable" if name.startswith(_PORTABLE_PRODUCER) else "bytecode"


def portable_version(data: bytes) -> str | None:
    name = producer(data) or ""
    return name.removeprefix(_PORTABLE_PRODUCER) if name.startswith(_PORTABLE_PRODUCER) else None


def load(data: str | bytes, ctx: ir.Context) -> ir.Module:
    """Parses any of the three forms into a StableHLO module in `ctx`."""
    if detect(data) != "portable":
        return parse_module(data, ctx)
    from jaxlib import _jax

    try:
        return _jax.mlir.deserialize_portable_artifact(data, context=ctx)
    except ir.MLIRError as e:
        raise mlir_error("cannot read the portable artifact", e) from None
    except Exception as e:  # jaxlib raises its own error type for bad artifacts
        raise ModuleError(f"cannot read the portable artifact: {e}") from None


def save(
    module: ir.Module, form: str, target: str | None = None, locations: bool = False
) -> str | bytes:
    """Prints a module as text (with `loc(...)` if `locations`), bytecode, or a portable
    artifact for StableHLO `target` (default: the newest version this jaxlib writes)."""
    if form != "portable":
        return print_module(module, form, locations)
    from jaxlib import _jax
    from jaxlib.mlir.dialects import stablehlo

    target = target or stablehlo.get_current_version()
    try:
        return _jax.mlir.serialize_portable_artifact(print_module(module, "bytecode"), target)
    except Exception as e:  # an op the target version cannot express, a bad version
        raise ModuleError(f"cannot write a portable artifact for StableHLO {target}: {e}") from None

"""@main's argument and result shapes and element types, read with our MLIR parser.

Every element type a real model uses has a numpy dtype here (ml_dtypes for bf16, the f8 and
f4 kinds and the sub-byte integers), so its values can be drawn and compared; a type without
one (`tensor<4x!quant...>`, a token, an unranked tensor) keeps its MLIR name and no dtype: the
graph is then compared by placement and cost only, and its report says which value was not
run. How the arguments are drawn is `draws.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ShardyConvertError
from ...formats import device_order
from ...ir.bindings import ir
from ...ir.parse import new_context, parse_module
from ...ir.value_attrs import value_dicts
from ...ir.walker import func_name, funcs

# MLIR element type -> numpy dtype name (numpy's own, or ml_dtypes' for the narrow floats and
# sub-byte integers). Complex types are spelled `complex<f32>`.
_DTYPES = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f8E4M3FN": "float8_e4m3fn",
    "f8E5M2": "float8_e5m2",
    "f8E4M3FNUZ": "float8_e4m3fnuz",
    "f8E5M2FNUZ": "float8_e5m2fnuz",
    "f8E4M3B11FNUZ": "float8_e4m3b11fnuz",
    "f8E3M4": "float8_e3m4",
    "f8E4M3": "float8_e4m3",
    "f8E8M0FNU": "float8_e8m0fnu",
    "f4E2M1FN": "float4_e2m1fn",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
    "i1": "bool",
    "i2": "int2",
    "i4": "int4",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui2": "uint2",
    "ui4": "uint4",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}

# ((dims), dtype): dtype None where numpy has no type for the element type (see `Signature`).
Shape = tuple[tuple[int, ...], np.dtype | None]


@dataclass(frozen=True)
class Signature:
    """@main's argument and result shapes, their MLIR element types (`arg_types`,
    `result_types`: `f32`, `complex<f32>`, ...) and which results carry a sharding
    annotation, and the device order the module asks to be compiled in
    (`shardy_convert.device_order`: the device each partition runs on; a program placed whole
    on one device is one partition)."""

    args: list[Shape]
    results: list[Shape]
    annotated_results: frozenset[int]
    arg_types: tuple[str, ...] = ()
    result_types: tuple[str, ...] = ()
    device_order: tuple[int, ...] | None = None

    def unrunnable(self) -> list[str]:
        """Each argument and result whose values cannot be made or read here, as
        `parameter 3 (tensor<4x!tok>)`; empty when every value can be run."""
        found = [
            f"parameter {k} ({self.arg_types[k]})"
            for k, (_, dtype) in enumerate(self.args)
            if dtype is None
        ]
        return found + [
            f"output {k} ({self.result_types[k]})"
            for k, (_, dtype) in enumerate(self.results)
            if dtype is None
        ]

    def propagate_to_output(self) -> tuple[bool, ...]:
        """XLA's `allow_spmd_sharding_propagation_to_output`, one flag per result, as
        `jax.jit` sets it: propagation only to a result the module leaves unannotated, so
        that neither partitioner overrides an annotated one (GSPMD would, Shardy would not)."""
        flags = tuple(k not in self.annotated_results for k in range(len(self.results)))
        return flags or (False,)  # XLA takes one flag for all; no result, nothing to allow


def main_signature(text: str | bytes) -> Signature:
    """Shapes and element types of @main's arguments and results."""
    with new_context() as ctx:
        return signature_of(parse_module(text, ctx).operation)


def signature_of(module: ir.Operation) -> Signature:
    """`main_signature` of a parsed module."""
    import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)

    main = next((f for f in funcs(module) if func_name(f) == "main"), None)
    if main is None:
        raise ShardyConvertError("the module has no @main function")
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    annotated = frozenset(
        k for k, d in enumerate(_result_attrs(main)) if {"mhlo.sharding", "sdy.sharding"} & d
    )
    args = [_shape(t) for t in ftype.inputs]
    results = [_shape(t) for t in ftype.results]
    return Signature(
        [s for s, _ in args],
        [s for s, _ in results],
        annotated,
        tuple(name for _, name in args),
        tuple(name for _, name in results),
        device_order.read(module),
    )


def _result_attrs(func) -> list[set[str]]:
    return [{d[i].name for i in range(len(d))} for d in value_dicts(func, "result")]


def _shape(t) -> tuple[Shape, str]:
    """((dims, dtype or None), the MLIR type as written for messages)."""
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return ((), None), str(t)  # a token, an unranked or dynamic tensor: no test values
    tensor = ir.RankedTensorType(t)
    return (tuple(tensor.shape), dtype_of(str(tensor.element_type))), str(t)


def dtype_of(element: str) -> np.dtype | None:
    """The numpy dtype of an MLIR element type (`f32`, `complex<f32>`, `f8E4M3FN`), None when
    neither numpy nor this ml_dtypes has one."""
    import ml_dtypes

    name = _DTYPES.get(element)
    if name is None:
        return None
    kind = getattr(ml_dtypes, name, None) or getattr(np, name, None)
    return None if kind is None else np.dtype(kind)

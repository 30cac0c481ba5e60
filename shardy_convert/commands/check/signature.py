"""@main's argument and result shapes, read with our MLIR parser, and random inputs for them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ShardyConvertError
from ...ir.bindings import ir
from ...ir.parse import new_context, parse_module
from ...ir.walker import func_name, funcs

_DTYPES = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}

Shape = tuple[tuple[int, ...], np.dtype]


@dataclass(frozen=True)
class Signature:
    """@main's argument and result shapes, and which results carry a sharding annotation."""

    args: list[Shape]
    results: list[Shape]
    annotated_results: frozenset[int]


def main_signature(text: str | bytes) -> Signature:
    """Shapes and dtypes of @main's arguments and results."""
    import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)

    with new_context() as ctx:
        module = parse_module(text, ctx)
        main = next((f for f in funcs(module.operation) if func_name(f) == "main"), None)
        if main is None:
            raise ShardyConvertError("the module has no @main function")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        annotated = frozenset(
            k for k, d in enumerate(_result_attrs(main)) if {"mhlo.sharding", "sdy.sharding"} & d
        )
        return Signature(
            [_shape(t) for t in ftype.inputs], [_shape(t) for t in ftype.results], annotated
        )


def _result_attrs(func) -> list[set[str]]:
    if "res_attrs" not in func.attributes:
        return []
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes["res_attrs"])]
    return [{d[i].name for i in range(len(d))} for d in dicts]


def _shape(t) -> Shape:
    tensor = ir.RankedTensorType(t)
    element = str(tensor.element_type)
    if element not in _DTYPES:
        raise ShardyConvertError(f"cannot make test inputs of element type {element}")
    import ml_dtypes

    name = _DTYPES[element]
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    return tuple(tensor.shape), dtype


def random_inputs(signature: Signature, seed: int) -> list[np.ndarray]:
    """One random array per @main argument: standard normal floats, small non-negative
    integers (valid as indices into most dims), random bools."""
    rng = np.random.default_rng(seed)
    return [_random(rng, shape, dtype) for shape, dtype in signature.args]


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 8, size=shape).astype(dtype)
    return rng.standard_normal(size=shape).astype(dtype)

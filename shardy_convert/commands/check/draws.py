"""Test inputs for @main: drawn by what each argument is where the graph tells, or the user's.

Standard normal floats make a real training step compute what it never computes: AdamW's
second moments and bias corrections drawn negative or near zero put `sqrt` of a negative
number (NaN) and divisions by almost nothing in the update, where reduction-order noise in the
gradient turns into whole steps, and a gather's ids drawn past the vocabulary read what no
step reads. So each argument is drawn by its uses in @main (`input_draws`), followed back from
the op that needs it through ops that keep a value's sign (convert, broadcast, reshape, add,
multiply, divide, subtract, select, reduce, ...):

- positive, uniform in [0.5, 2): a value fed to `sqrt`, `rsqrt`, `log`, `log_plus_one`, the
  base or exponent of a `power` whose exponent is not a constant, or a divisor. AdamW
  (torch): `sqrt(exp_avg_sq * beta2 + grad * grad * (1 - beta2)) / bias_correction2_sqrt + eps`
  makes `exp_avg_sq`, `beta2`, `bias_correction2_sqrt` and `eps` positive; `grad * grad`
  stops the walk (a square is never negative), as `exp` and `abs` do, and a `power` by a
  constant (RMSNorm's `x ** 2`);
- an index, uniform in [0, bound): an integer fed to a gather's, scatter's or dynamic slice's
  start indices, `bound` the largest start that stays inside the operand (`ids` into a
  128-row embedding: [0, 128));
- otherwise standard normal floats (complex: both parts), integers in [0, 8) (indices for
  most dims; [1, 8) for an integer divisor), random bools.

`--inputs FILE.npz` gives the user's own values instead (`user_inputs`): arrays named
`arg0`, `arg1`, ... (or numpy's `arr_0`, ... of `np.savez(path, *arrays)`), each optionally
under `graph N/` for graph N of a dump.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...errors import ShardyConvertError, plural
from ...ir.bindings import ir
from ...ir.ops import find_ops
from ...ir.parse import new_context, parse_module
from ...ir.walker import call_target, func_name, funcs
from .signature import Signature

# Ops through which a value keeps its sign (for positivity) and the operands it comes from;
# None: every operand.
_SIGN_KEEPING: dict[str, tuple[int, ...] | None] = {
    "stablehlo.convert": (0,),
    "stablehlo.broadcast_in_dim": (0,),
    "stablehlo.reshape": (0,),
    "stablehlo.transpose": (0,),
    "stablehlo.slice": (0,),
    "stablehlo.dynamic_slice": (0,),
    "stablehlo.concatenate": None,
    "stablehlo.add": None,
    "stablehlo.multiply": None,
    "stablehlo.divide": None,
    "stablehlo.subtract": None,
    "stablehlo.select": (1, 2),
    "stablehlo.clamp": (1,),
    "stablehlo.reduce": None,
    "stablehlo.sqrt": (0,),
    "stablehlo.rsqrt": (0,),
    "stablehlo.power": None,
    "stablehlo.custom_call": (0,),  # @Sharding and the manual-region calls: identities
}
# Ops that take a value as it is for an index (the start indices of gathers and slices).
_INDEX_KEEPING = ("stablehlo.convert", "stablehlo.reshape", "stablehlo.broadcast_in_dim",
                  "stablehlo.transpose", "stablehlo.slice", "stablehlo.concatenate",
                  "stablehlo.custom_call")  # fmt: skip
# Ops that need a positive operand: op -> the operands that must be.
_POSITIVE_SINKS: dict[str, tuple[int, ...]] = {
    "stablehlo.sqrt": (0,),
    "stablehlo.rsqrt": (0,),
    "stablehlo.log": (0,),
    "stablehlo.log_plus_one": (0,),
    "stablehlo.divide": (1,),
    "stablehlo.remainder": (1,),
}
_IDENTITY_CALLS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})
POSITIVE_RANGE = (0.5, 2.0)
INTEGER_RANGE = 8  # integers in [0, 8): valid indices into most dims


@dataclass(frozen=True)
class Draw:
    """How one argument is drawn: `kind` "normal", "positive" or "index" (in [0, `bound`)),
    and `why`, the op that asked for it (`stablehlo.sqrt at 12:5`)."""

    kind: str = "normal"
    bound: int = 0
    why: str = ""

    def __str__(self) -> str:
        if self.kind == "index":
            return f"an index in [0, {self.bound}) ({self.why})"
        return f"{self.kind} ({self.why})" if self.why else self.kind


def input_draws(text: str | bytes) -> list[Draw]:
    """One `Draw` per @main argument (see the module docstring)."""
    with new_context() as ctx:
        return draws_of(parse_module(text, ctx).operation)


def draws_of(module: ir.Operation) -> list[Draw]:
    """`input_draws` of a parsed module."""
    main = next((f for f in funcs(module) if func_name(f) == "main"), None)
    if main is None or not len(main.regions[0].blocks):
        return []
    count = len(main.regions[0].blocks[0].arguments)
    draws = [Draw() for _ in range(count)]
    positive = find_ops(main, lambda op: op.name in _POSITIVE_SINKS or op.name == "stablehlo.power")
    for op in positive:
        for k in _positive_operands(op):
            _mark(draws, op.operands[k], _positive_draw(op), _positive_path)
    for op in find_ops(main, lambda op: op.name in _INDEX_SINKS):
        for k, bound in _bounds(op):
            _mark(draws, op.operands[k], Draw("index", bound, _where(op)), _index_path)
    return draws


def _bounds(op: ir.Operation) -> list[tuple[int, int]]:
    """(operand, bound) of an index sink; none where its shapes are not all static (a bound
    read off a dynamic dim would be no bound): its indices are then drawn as integers are."""
    try:
        found = _INDEX_SINKS[op.name](op)
    except (KeyError, ValueError, TypeError):  # an attribute of another form
        return []
    return [(k, bound) for k, bound in found if 0 < bound < 2**31 and k < len(op.operands)]


def _positive_operands(op: ir.Operation) -> tuple[int, ...]:
    if op.name != "stablehlo.power":
        return _POSITIVE_SINKS[op.name]
    # x ** 2 (a constant exponent) is what it is for any x; x ** step needs both positive
    return () if _constant(op.operands[1]) else (0, 1)


def _positive_draw(op: ir.Operation) -> Draw:
    what = "a divisor of" if op.name in ("stablehlo.divide", "stablehlo.remainder") else "fed to"
    return Draw("positive", 0, f"{what} {_where(op)}")


def _where(op: ir.Operation) -> str:
    loc = str(op.location)
    found = re.search(r":(\d+):(\d+)", loc)
    return op.name + (f" at {found.group(1)}:{found.group(2)}" if found else "")


def _mark(draws: list[Draw], value: ir.Value, draw: Draw, path) -> None:
    """Follows `value` back to @main's arguments through the ops `path` allows; each
    argument reached gets `draw` (an index keeps the smallest bound)."""
    seen: dict = {}  # id -> op: held, so that no other op gets a freed op's id
    stack = [value]
    while stack:
        value = stack.pop()
        owner = value.owner
        if isinstance(owner, ir.Block):
            _set(draws, owner, ir.BlockArgument(value).arg_number, draw)
            continue
        op = owner.operation
        if id(op) in seen or len(seen) > 10_000:
            continue
        seen[id(op)] = op
        stack += path(op)


def _set(draws: list[Draw], block: ir.Block, k: int, draw: Draw) -> None:
    parent = block.owner
    if parent is None or parent.operation.name != "func.func" or k >= len(draws):
        return  # a block of a nested region (a reduce's body), not @main's arguments
    old = draws[k]
    if draw.kind == "positive" and old.kind == "positive":
        return  # the first op that asked says why
    if draw.kind == "index" and old.kind == "index" and old.bound <= draw.bound:
        return
    if old.kind == "index" and draw.kind == "positive":
        return  # an index that also divides: [1, bound) is drawn (see _integers)
    draws[k] = draw


def _positive_path(op: ir.Operation) -> list[ir.Value]:
    if op.name not in _SIGN_KEEPING:
        return []
    if op.name == "stablehlo.custom_call" and call_target(op) not in _IDENTITY_CALLS:
        return []
    if op.name == "stablehlo.multiply" and op.operands[0] == op.operands[1]:
        return []  # a square
    if op.name == "stablehlo.power" and _constant(op.operands[1]):
        return []
    if op.name == "stablehlo.reduce":  # its inputs, not its init values
        return list(op.operands)[: len(op.operands) // 2]
    keep = _SIGN_KEEPING[op.name]
    operands = list(op.operands)
    return operands if keep is None else [operands[k] for k in keep if k < len(operands)]


def _index_path(op: ir.Operation) -> list[ir.Value]:
    if op.name not in _INDEX_KEEPING:
        return []
    if op.name == "stablehlo.custom_call" and call_target(op) not in _IDENTITY_CALLS:
        return []
    return list(op.operands) if op.name == "stablehlo.concatenate" else [op.operands[0]]


def _constant(value: ir.Value) -> bool:
    """Whether `value` is a constant, through broadcasts, reshapes and converts."""
    for _ in range(8):
        owner = value.owner
        if isinstance(owner, ir.Block):
            return False
        op = owner.operation
        if op.name == "stablehlo.constant":
            return True
        if op.name not in ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert"):
            return False
        value = op.operands[0]
    return False


def _dims(value: ir.Value) -> list[int]:
    """A value's static shape; ValueError where it is unranked or has a dynamic dim."""
    if not isinstance(value.type, ir.RankedTensorType):
        raise ValueError("unranked")
    tensor = ir.RankedTensorType(value.type)
    if not tensor.has_static_shape:
        raise ValueError("dynamic")
    return list(tensor.shape)


def _gather_bounds(op: ir.Operation) -> list[tuple[int, int]]:
    """Operand 1, bounded by the smallest room a start has in a dim of start_index_map."""
    mapped = _int_list(op.attributes["dimension_numbers"], "start_index_map")
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    dims = _dims(op.operands[0])
    rooms = [dims[d] - sizes[d] + 1 for d in mapped if d < len(dims) and d < len(sizes)]
    return [(1, max(1, min(rooms)))] if rooms else []


def _scatter_bounds(op: ir.Operation) -> list[tuple[int, int]]:
    inputs = (len(op.operands) - 1) // 2
    mapped = _int_list(op.attributes["scatter_dimension_numbers"], "scatter_dims_to_operand_dims")
    dims = _dims(op.operands[0])
    rooms = [dims[d] for d in mapped if d < len(dims)]
    return [(inputs, max(1, min(rooms)))] if rooms else []


def _dynamic_slice_bounds(op: ir.Operation) -> list[tuple[int, int]]:
    dims = _dims(op.operands[0])
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    return [(1 + d, max(1, dims[d] - sizes[d] + 1)) for d in range(min(len(dims), len(sizes)))]


def _dynamic_update_bounds(op: ir.Operation) -> list[tuple[int, int]]:
    dims, update = _dims(op.operands[0]), _dims(op.operands[1])
    return [(2 + d, max(1, dims[d] - update[d] + 1)) for d in range(min(len(dims), len(update)))]


_INDEX_SINKS = {
    "stablehlo.gather": _gather_bounds,
    "stablehlo.scatter": _scatter_bounds,
    "stablehlo.dynamic_slice": _dynamic_slice_bounds,
    "stablehlo.dynamic_update_slice": _dynamic_update_bounds,
}


def _int_list(attr: ir.Attribute, name: str) -> list[int]:
    """`start_index_map = [0, 2]` read from a dimension-numbers attribute's text."""
    found = re.search(rf"\b{name} = \[([\d, ]*)\]", str(attr))
    return [int(x) for x in found.group(1).split(",") if x.strip()] if found else []


# --- drawing ---------------------------------------------------------------------------------


def draw_inputs(
    signature: Signature, draws: list[Draw], seed: int, scale: float = 1.0
) -> list[np.ndarray]:
    """One array per @main argument, drawn as `draws` say (normal where they say nothing),
    floats times `scale`. The caller checks `signature.unrunnable()` first."""
    rng = np.random.default_rng(seed)
    found = []
    for k, (shape, dtype) in enumerate(signature.args):
        draw = draws[k] if k < len(draws) else Draw()
        # a dtype for every argument: the caller checked signature.unrunnable()
        found.append(_draw(rng, shape, dtype, draw, scale))  # type: ignore[arg-type]
    return found


def random_inputs(signature: Signature, seed: int) -> list[np.ndarray]:
    """Inputs drawn without looking at the graph: standard normal floats, integers in [0, 8),
    random bools."""
    return draw_inputs(signature, [], seed)


def _draw(rng, shape: tuple[int, ...], dtype: np.dtype, draw: Draw, scale: float) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu" or dtype.name.startswith(("int", "uint")):
        return _integers(rng, shape, dtype, draw)
    if dtype.kind == "c":
        parts = rng.standard_normal(size=(2, *shape)) * scale
        return (parts[0] + 1j * parts[1]).astype(dtype)
    if draw.kind == "positive" or dtype.name == "float8_e8m0fnu":  # e8m0: no sign bit
        return (rng.uniform(*POSITIVE_RANGE, size=shape) * scale).astype(dtype)
    return (rng.standard_normal(size=shape) * scale).astype(dtype)


def _integers(rng, shape: tuple[int, ...], dtype: np.dtype, draw: Draw) -> np.ndarray:
    import ml_dtypes

    info = ml_dtypes.iinfo(dtype) if dtype.name.startswith(("int", "uint")) else np.iinfo(dtype)
    high = draw.bound if draw.kind == "index" else INTEGER_RANGE
    low = 1 if draw.kind == "positive" else 0
    high = max(low + 1, min(high, int(info.max) + 1))
    return rng.integers(low, high, size=shape).astype(dtype)


# --- the user's inputs -------------------------------------------------------------------------


def user_inputs(
    arrays: dict[str, np.ndarray], signature: Signature, graph: int | None, file: str
) -> list[np.ndarray]:
    """The user's arrays for @main's arguments (see the module docstring), each cast to its
    parameter's type. Raises a ShardyConvertError naming the file and the parameter when one
    is missing or of another shape."""
    found = []
    for k, (shape, dtype) in enumerate(signature.args):
        value = _named(arrays, k, graph)
        if value is None:
            raise ShardyConvertError(
                f"{file}: no array for parameter {k} (arg{k}"
                + (f" or graph {graph}/arg{k}" if graph is not None else "")
                + f"; @main takes {plural(len(signature.args), 'parameter')})"
            )
        if tuple(value.shape) != tuple(shape):
            raise ShardyConvertError(
                f"{file}: parameter {k} has shape {list(value.shape)} where @main takes "
                f"{list(shape)}"
            )
        found.append(np.asarray(value).astype(dtype))
    return found


def _named(arrays: dict[str, np.ndarray], k: int, graph: int | None) -> np.ndarray | None:
    names = [f"arg{k}", f"arr_{k}"]
    if graph is not None:
        names = [f"graph {graph}/{n}" for n in names] + [f"graph{graph}/{n}" for n in names] + names
    return next((arrays[n] for n in names if n in arrays), None)


def read_inputs(path: str) -> dict[str, np.ndarray]:
    """The arrays of an `.npz` (or `.npy`: one array, parameter 0) file."""
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ShardyConvertError(f"{path}: cannot read test inputs: {e}") from None
    if isinstance(data, np.ndarray):  # an .npy file: the array itself
        return {"arg0": data}
    with data:
        return {name: data[name] for name in data.files}

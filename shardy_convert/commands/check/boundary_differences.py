"""Where the two partitioners' compiled programs meet the caller differently: every parameter
and output whose compiled sharding (`get_parameter_shardings` / `get_output_shardings`) is
not the same under GSPMD and Shardy.

A parameter, or an output the original annotates, must not differ: that is a conversion
failure (see `verdict`). An output the original leaves open is each partitioner's choice, and
torch_xla leaves them all open: it reads the output shardings back from the compiled program
and gives them to the tensors. When such a tensor is the next step's input (an updated weight,
an optimizer state), the next step's graph has other input shardings than under GSPMD, so
torch_xla traces and compiles it again. Its dumps do not say which output becomes which input
(`mhlo.input_output_alias = []`), so an output of the same type as a parameter is taken to be
fed back as that parameter (preferring one whose GSPMD sharding the output has). Example:
AdamW's `exp_avg` of a `f32[64,32]` weight, `{devices=[1,4,2]...}` under GSPMD, and
`{devices=[4,1,2]...}` under Shardy: the second step runs on another program.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compiled import Compiled
from .signature import Shape

# numpy dtype names as HLO spells element types.
_HLO_TYPES = {"bool": "pred", "bfloat16": "bf16", "complex64": "c64", "complex128": "c128"}


@dataclass(frozen=True)
class BoundaryDifference:
    """A parameter or output of @main compiled to another sharding under Shardy than under
    GSPMD. `annotated`: the original fixes it (a conversion failure when it differs);
    `fed_back_as`: the parameter an unannotated output is taken to become next step."""

    kind: str  # "parameter" or "output"
    index: int
    type: str  # HLO spelling: f32[64,32]
    gspmd: str
    shardy: str
    annotated: bool
    fed_back_as: int | None = None

    @property
    def retraces(self) -> bool:
        """torch_xla would trace and compile the next step again (see the module docstring)."""
        return self.fed_back_as is not None


def boundary_differences(gspmd: Compiled, shardy: Compiled) -> list[BoundaryDifference]:
    """Every parameter, then every output, whose compiled sharding differs (both replicated
    counts as equal, however spelled)."""
    signature = gspmd.signature
    found = [
        BoundaryDifference("parameter", k, hlo_type(signature.args[k]), repr(a), repr(b), True)
        for k, a, b in _differing(gspmd.parameters, shardy.parameters)
    ]
    for k, a, b in _differing(gspmd.outputs, shardy.outputs):
        annotated = k in signature.annotated_results
        fed_back = None if annotated else _fed_back_as(gspmd, k)
        shape = hlo_type(signature.results[k])
        found.append(BoundaryDifference("output", k, shape, repr(a), repr(b), annotated, fed_back))
    return found


def _differing(a: list, b: list) -> list[tuple[int, object, object]]:
    return [
        (k, x, y)
        for k, (x, y) in enumerate(zip(a, b))
        if x != y and not (x.is_replicated() and y.is_replicated())
    ]


def _fed_back_as(gspmd: Compiled, output: int) -> int | None:
    """The parameter of the output's type, preferring one with the output's GSPMD sharding."""
    signature = gspmd.signature
    want = signature.results[output]
    same_type = [k for k, arg in enumerate(signature.args) if _same(arg, want)]
    for k in same_type:
        if k < len(gspmd.parameters) and gspmd.parameters[k] == gspmd.outputs[output]:
            return k
    return same_type[0] if same_type else None


def _same(a: Shape, b: Shape) -> bool:
    return tuple(a[0]) == tuple(b[0]) and a[1] == b[1]


def hlo_type(shape: Shape) -> str:
    """`f32[64,32]` for ((64, 32), float32), `pred[]` for a bool scalar."""
    dims, dtype = shape
    name = _HLO_TYPES.get(dtype.name)
    if name is None:
        kind = {"f": "f", "i": "s", "u": "u", "c": "c"}.get(dtype.kind, dtype.kind)
        name = f"{kind}{dtype.itemsize * 8}"
    return f"{name}[{','.join(str(d) for d in dims)}]"

"""Where the two partitioners' compiled programs meet the caller differently: every parameter
and output whose compiled sharding (`get_parameter_shardings` / `get_output_shardings`) is
not the same under GSPMD and Shardy.

A parameter, or an output the original annotates, must not differ: that is a conversion
failure (see `verdict`). An output the original leaves open is each partitioner's choice, and
torch_xla leaves them all open: it reads the output shardings back from the compiled program
and gives them to the tensors. When such a tensor is the next step's input (an updated weight,
an optimizer state), the next step's graph has other input shardings than under GSPMD, so
torch_xla traces and compiles it again. Which parameter an output becomes is read where the
module says it (aliasing.py: `tf.aliasing_output`, `mhlo.input_output_alias`, donated
arguments); torch_xla's dumps do not (`mhlo.input_output_alias = []`), and there every
parameter of the output's type is named as a candidate, never one picked. Example: AdamW's
`exp_avg` of a `f32[64,32]` weight, `{devices=[1,4,2]...}` under GSPMD, and `{devices=[4,1,2]
...}` under Shardy: the second step runs on another program.
"""

from __future__ import annotations

from dataclasses import dataclass

from .aliasing import Aliasing, FedBack, fed_back, read_aliasing
from .compiled import Compiled
from .signature import Shape

# numpy dtype names as HLO spells element types.
_HLO_TYPES = {"bool": "pred", "bfloat16": "bf16", "complex64": "c64", "complex128": "c128"}


@dataclass(frozen=True)
class BoundaryDifference:
    """A parameter or output of @main compiled to another sharding under Shardy than under
    GSPMD. `annotated`: the original fixes it (a conversion failure when it differs);
    `fed_back_candidates`: the parameters an unannotated output may become next step, and
    `fed_back_evidence` what says so ("aliased", "donated" or "type"); `fed_back_as` the one
    parameter where they name one."""

    kind: str  # "parameter" or "output"
    index: int
    type: str  # HLO spelling: f32[64,32]
    gspmd: str
    shardy: str
    annotated: bool
    fed_back_as: int | None = None
    fed_back_candidates: tuple[int, ...] = ()
    fed_back_evidence: str = ""

    @property
    def retraces(self) -> bool:
        """torch_xla would trace and compile the next step again (see the module docstring)."""
        return bool(self.fed_back_candidates)

    @property
    def fed_back(self) -> str:
        """What becomes of the output, for people (aliasing.FedBack)."""
        return str(FedBack(self.fed_back_candidates, self.fed_back_evidence))


def boundary_differences(gspmd: Compiled, shardy: Compiled) -> list[BoundaryDifference]:
    """Every parameter, then every output, whose compiled sharding differs (both replicated
    counts as equal, however spelled; so does GSPMD's `{maximal device=k}` and a Shardy
    program compiled as one partition on that device k)."""
    signature = gspmd.signature
    single = _single_device(gspmd, shardy)
    found = [
        BoundaryDifference("parameter", k, hlo_type(signature.args[k]), repr(a), repr(b), True)
        for k, a, b in _differing(gspmd.parameters, shardy.parameters, single)
    ]
    aliasing: Aliasing | None = None
    for k, a, b in _differing(gspmd.outputs, shardy.outputs, single):
        annotated = k in signature.annotated_results
        becomes = FedBack()
        if not annotated:
            aliasing = aliasing or read_aliasing(gspmd.source)  # read once, where needed
            becomes = fed_back(aliasing, k, _same_type(gspmd, k))
        placed = ("output", k, hlo_type(signature.results[k]), repr(a), repr(b), annotated)
        found.append(BoundaryDifference(*placed, becomes.known, *_fed(becomes)))
    return found


def _fed(becomes: FedBack) -> tuple[tuple[int, ...], str]:
    return becomes.candidates, becomes.evidence


def _differing(a: list, b: list, single: str | None = None) -> list[tuple[int, object, object]]:
    return [
        (k, x, y)
        for k, (x, y) in enumerate(zip(a, b))
        if x != y
        and not (x.is_replicated() and y.is_replicated())
        and not (single is not None and str(x) == single and y.is_replicated())
    ]


def _single_device(gspmd: Compiled, shardy: Compiled) -> str | None:
    """`{maximal device=k}` when the Shardy program runs as one partition on GSPMD's device k
    (passes/single_device_program.py: JAX's form of a program placed whole on one device)."""
    if len(shardy.devices) != 1 or len(gspmd.devices) == 1:
        return None
    device = shardy.devices[0]
    return f"{{maximal device={gspmd.devices.index(device)}}}" if device in gspmd.devices else None


def _same_type(gspmd: Compiled, output: int) -> list[int]:
    """The parameters of the output's shape and element type."""
    signature = gspmd.signature
    want, element = signature.results[output], _element(signature.result_types, output)
    return [
        k
        for k, arg in enumerate(signature.args)
        if _same(arg, want) and _element(signature.arg_types, k) == element
    ]


def _element(types: tuple[str, ...], k: int) -> str:
    return types[k].rsplit("x", 1)[-1] if k < len(types) else ""


def _same(a: Shape, b: Shape) -> bool:
    return tuple(a[0]) == tuple(b[0]) and a[1] == b[1]


def hlo_type(shape: Shape) -> str:
    """`f32[64,32]` for ((64, 32), float32), `pred[]` for a bool scalar."""
    dims, dtype = shape
    if dtype is None:
        return f"?[{','.join(str(d) for d in dims)}]"
    name = _HLO_TYPES.get(dtype.name)
    if name is None and dtype.name.startswith(("float8_", "float4_")):  # f8e4m3fn, f4e2m1fn
        name = "f" + dtype.name.removeprefix("float").replace("_", "")
    if name is None and dtype.name in ("int2", "int4", "uint2", "uint4"):
        name = ("u" if dtype.name.startswith("u") else "s") + dtype.name[-1]
    if name is None:
        kind = {"f": "f", "i": "s", "u": "u", "c": "c"}.get(dtype.kind, dtype.kind)
        name = f"{kind}{dtype.itemsize * 8}"
    return f"{name}[{','.join(str(d) for d in dims)}]"

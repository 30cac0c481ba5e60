"""`check`: proof by compilation that a conversion is right, graph by graph.

The GSPMD original and the Shardy result are compiled on jaxlib's CPU PJRT client with N
virtual devices (GSPMD partitioner for the original, Shardy for the result); their parameter
shardings, the output shardings the original annotates, and their values on random inputs must
agree, and both are compared with the program run unpartitioned on one device, which tells a
conversion bug from a compiler bug; where the three disagree, they run again widened to f64,
where float noise cannot hide a real difference. Each graph gets one verdict: same program,
same up to float reassociation, conversion differs, compiler differs from the unpartitioned
reference, same placement (values not run), already Shardy, or the located error that stopped
it. Beside the verdict, which partitioner XLA really used on each side, and what each
compiled: collectives, memory, FLOPs, rematerializations, and the outputs compiled to other
shardings, with the parameters each may become (the report; `--max-cost-ratio` gates on it).

The room:
- `run.py`: the loop over a batch (`check_inputs`): read, convert, compile, compare.
- `program.py`: one side of a graph read in one parse (`Program`: its signature, devices,
  draws, unpartitioned reference, mesh).
- `compare.py`: one graph's comparison (`compare`) and its `CheckReport`.
- `verdict.py`: the verdicts a graph can get (`Verdict`).
- `numerics.py`: the values' verdict: the first run, the f64 rerun (or a second draw), who
  disagrees with the unpartitioned run, on which devices.
- `draws.py`: test inputs drawn by what each argument is (positive, an index), or the user's.
- `widen.py`: the module with f32/bf16/f16 written f64, where it allows.
- `values.py`: outputs compared exactly or up to float reassociation (pure numpy).
- `reference.py`: the unpartitioned program, and the Shardy program on the identity order.
- `partitioner.py`: which partitioner XLA really compiled a program with (its log, its
  fallback predicate).
- `aliasing.py`: which parameter an output becomes, where the module says (aliases, donors).
- `reproducer.py`: a differing graph written as programs, inputs and a script (`--reproducer`).
- `compiled.py`: a program compiled on N CPU devices (through xla/) and run on inputs.
- `cost.py`: what a compiled program costs: collectives by kind, memory, FLOPs, XLA's
  involuntary rematerializations (`program_cost`).
- `boundary_differences.py`: parameters and outputs compiled to other shardings, those fed
  back marked.
- `summary.py`: a batch's totals and worst graphs, and the cost gate (`cost_excess`).
- `render_text.py`, `render_json.py`: the report for people and for tools (same data).
- `signature.py`: @main's shapes and element types, and which results are annotated.
"""

from __future__ import annotations

from .compare import CheckReport, compare, compare_compiled, compare_programs, compare_read
from .compiled import Compiled, compile_module, compile_program, execute
from .cost import Collectives, Cost, program_cost
from .draws import random_inputs
from .program import Program, read_converted, read_original
from .run import CheckRequest, GraphCheck, check_inputs, device_count
from .signature import Signature, main_signature
from .values import Agreement, agreement, tolerance
from .verdict import Verdict

__all__ = [
    "Agreement",
    "CheckReport",
    "CheckRequest",
    "Collectives",
    "Compiled",
    "Cost",
    "GraphCheck",
    "Program",
    "Signature",
    "Verdict",
    "agreement",
    "check_inputs",
    "compare",
    "compare_compiled",
    "compare_programs",
    "compare_read",
    "compile_module",
    "compile_program",
    "device_count",
    "execute",
    "main_signature",
    "program_cost",
    "random_inputs",
    "read_converted",
    "read_original",
    "tolerance",
]

"""`check`: proof by compilation that a conversion is right, graph by graph.

The GSPMD original and the Shardy result are compiled on jaxlib's CPU PJRT client with N
virtual devices (GSPMD partitioner for the original, Shardy for the result); their parameter
shardings, the output shardings the original annotates, and their values on random inputs must
agree, and both are compared with the program run unpartitioned on one device, which tells a
conversion bug from a compiler bug. Each graph gets one verdict: same program, same up to float
reassociation, conversion differs, compiler differs from the unpartitioned reference, already
Shardy, or the located error that stopped it. Beside the verdict, what each partitioner
compiled: collectives, memory, FLOPs, rematerializations, and the outputs compiled to other
shardings (the report; `--max-cost-ratio` gates on it).

The room:
- `run.py`: the loop over a batch (`check_inputs`): read, convert, compile, compare.
- `compare.py`: one graph's comparison (`compare`) and its `Report`.
- `verdict.py`: the verdicts a graph can get (`Verdict`).
- `values.py`: outputs compared exactly or up to float reassociation (pure numpy).
- `reference.py`: the unpartitioned program, and the Shardy program on the identity order.
- `compiled.py`: a program compiled on N CPU devices (through xla/) and run on inputs.
- `cost.py`: what a compiled program costs: collectives by kind, memory, FLOPs, XLA's
  involuntary rematerializations (`program_cost`).
- `boundary_differences.py`: parameters and outputs compiled to other shardings, those fed
  back marked.
- `summary.py`: a batch's totals and worst graphs, and the cost gate (`cost_excess`).
- `render_text.py`, `render_json.py`: the report for people and for tools (same data).
- `signature.py`: @main's shapes and random inputs for them.
"""

from __future__ import annotations

from .compare import Report, compare, compare_compiled, compare_programs, compare_values
from .compiled import Compiled, compile_module, execute
from .cost import Collectives, Cost, program_cost
from .run import GraphCheck, check_inputs, device_count
from .signature import Signature, main_signature, random_inputs
from .values import Agreement, agreement, tolerance
from .verdict import Verdict

__all__ = [
    "Agreement",
    "Collectives",
    "Compiled",
    "Cost",
    "GraphCheck",
    "Report",
    "Signature",
    "Verdict",
    "agreement",
    "check_inputs",
    "compare",
    "compare_compiled",
    "compare_programs",
    "compare_values",
    "compile_module",
    "device_count",
    "execute",
    "main_signature",
    "program_cost",
    "random_inputs",
    "tolerance",
]

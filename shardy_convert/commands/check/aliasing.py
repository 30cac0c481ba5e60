"""Which parameter an output becomes, from what the module says, not from a guess.

A program may say it, three ways:
- `tf.aliasing_output = K` on @main's argument P (JAX's donated arguments with a known
  output): output K is written into P's buffer, P's next value;
- the module attribute `mhlo.input_output_alias` (what XLA's importer makes of an HLO
  module's `input_output_alias`, torch_xla's own runtime programs and HLO protos among them):
  `{alias = {parameter_number = P, ...}, output_index = array<i64: K>}`;
- `jax.buffer_donor = true` on an argument: donated, its output not named; an output of the
  same type may become it.
Where none says anything (torch_xla's dumps write `mhlo.input_output_alias = []`), an output
can become any parameter of its type: `fed_back` names all of them, never one picked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...ir.bindings import ir
from ...ir.parse import new_context, parse_module
from ...ir.value_attrs import value_dicts
from ...ir.walker import func_name, funcs

ALIASING_OUTPUT = "tf.aliasing_output"
BUFFER_DONOR = "jax.buffer_donor"
INPUT_OUTPUT_ALIAS = "mhlo.input_output_alias"


@dataclass(frozen=True)
class Aliasing:
    """What a module says: `aliased` output -> parameter, `donors` (donated parameters)."""

    aliased: dict[int, int] = field(default_factory=dict)
    donors: frozenset[int] = frozenset()


@dataclass(frozen=True)
class FedBack:
    """The parameters an output may become (`candidates`) and what says so (`evidence`:
    "aliased", "donated" or "type"); no candidates, nothing is fed back."""

    candidates: tuple[int, ...] = ()
    evidence: str = ""

    @property
    def known(self) -> int | None:
        """The one parameter, where the evidence names one (an alias, or the only
        candidate)."""
        return self.candidates[0] if len(self.candidates) == 1 else None

    def __str__(self) -> str:
        if not self.candidates:
            return ""
        if self.evidence == "aliased":
            return f"fed back as parameter {self.candidates[0]} (aliased in the module)"
        noun = "donated parameter" if self.evidence == "donated" else "parameter"
        if len(self.candidates) == 1:
            return f"fed back as parameter {self.candidates[0]}, the only {noun} of its type"
        listed = ", ".join(str(k) for k in self.candidates)
        return (
            f"may be fed back as any {noun} of its type: {listed} (the module does not say which)"
        )


def read_aliasing(text: str | bytes) -> Aliasing:
    """The aliasing `text`'s @main and module attributes state (see the module docstring)."""
    with new_context() as ctx:
        module = parse_module(text, ctx)
        main = next((f for f in funcs(module.operation) if func_name(f) == "main"), None)
        aliased = _module_aliases(module.operation)
        donors = set()
        for k, attrs in enumerate(_arg_attrs(main)):
            if ALIASING_OUTPUT in attrs:
                aliased[ir.IntegerAttr(attrs[ALIASING_OUTPUT]).value] = k
            if BUFFER_DONOR in attrs and str(attrs[BUFFER_DONOR]) == "true":
                donors.add(k)
        return Aliasing(aliased, frozenset(donors | set(aliased.values())))


def _arg_attrs(main) -> list:
    return [] if main is None else value_dicts(main, "arg")


def _module_aliases(module: ir.Operation) -> dict[int, int]:
    """output -> parameter of `mhlo.input_output_alias` (outputs of a tuple root, top-level
    parameters only: a nested tuple index names no @main value)."""
    if INPUT_OUTPUT_ALIAS not in module.attributes:
        return {}
    found = {}
    for entry in ir.ArrayAttr(module.attributes[INPUT_OUTPUT_ALIAS]):
        text = str(entry)
        output = re.search(r"output_index = array<i64(?:: (\d+))?>", text)
        parameter = re.search(r"parameter_number = (\d+)", text)
        nested = re.search(r"parameter_index = array<i64: ", text)
        if output and output.group(1) is not None and parameter and not nested:
            found[int(output.group(1))] = int(parameter.group(1))
    return found


def fed_back(aliasing: Aliasing, output: int, same_type: list[int]) -> FedBack:
    """What output `output` becomes, given the parameters of its type (`same_type`)."""
    if output in aliasing.aliased:
        return FedBack((aliasing.aliased[output],), "aliased")
    donated = [k for k in same_type if k in aliasing.donors]
    if donated:
        return FedBack(tuple(donated), "donated")
    return FedBack(tuple(same_type), "type") if same_type else FedBack()

"""aliasing.py and the boundary report: which parameter an output becomes, read where the
module says it (JAX's tf.aliasing_output, an HLO module's input_output_alias and
buffer_donor), and by type only where nothing says it: then every candidate, never one."""

from __future__ import annotations

import re

from shardy_convert import convert
from shardy_convert.commands.check import compare
from shardy_convert.commands.check.aliasing import FedBack, fed_back, read_aliasing
from shardy_convert.commands.check.render_json import difference_json
from shardy_convert.commands.check.render_text import details_text
from shardy_convert.commands.check.signature import main_signature
from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context, print_module

from ...conftest import TESTDATA

DONATED = TESTDATA / "jax" / "donated_update.gspmd.mlir"
JAX_DUMP = TESTDATA / "jax" / "donated_update_xla_dump.xla_dump"
TORCH_DUMP = TESTDATA / "torch_xla" / "tp_mlp_xla_dump.xla_dump"


def _loaded(path) -> str:
    """An XLA dump file (HLO text or proto) as the MLIR text `check` reads."""
    with new_context() as ctx:
        return print_module(formats.load(path.read_bytes(), ctx))


def _same_type(text: str, output: int) -> list[int]:
    signature = main_signature(text)
    want = signature.results[output]
    return [k for k, arg in enumerate(signature.args) if arg == want]


def test_jax_donation_names_the_parameter():
    """jax.jit(donate_argnums=(0,)) with out_shardings: `tf.aliasing_output = 0` on %arg0."""
    text = DONATED.read_text()
    aliasing = read_aliasing(text)
    assert aliasing.aliased == {0: 0}
    assert fed_back(aliasing, 0, _same_type(text, 0)) == FedBack((0,), "aliased")
    assert str(fed_back(aliasing, 0, [0, 1])) == "fed back as parameter 0 (aliased in the module)"
    assert fed_back(aliasing, 1, _same_type(text, 1)) == FedBack()  # the loss: no parameter


def test_an_hlo_modules_input_output_alias_names_it_too():
    """The same program as XLA dumped it, HLO text and HloProto: `input_output_alias={ {0}:
    (0, {}, may-alias) }`, which XLA's importer keeps as mhlo.input_output_alias."""
    for name in ("before_optimizations.txt", "before_optimizations.hlo.pb"):
        (path,) = JAX_DUMP.glob(f"*.{name}")
        assert read_aliasing(_loaded(path)).aliased == {0: 0}, name


def test_torch_xla_runtime_donors_narrow_the_candidates():
    """torch_xla's own runtime program (XLA's dump of a tensor-parallel MLP step) donates
    parameters 1, 2, 3, 4, 7, 9, 10, 11 (`buffer_donor` in its header), without naming their
    outputs: an output becomes one of the donors of its type; where no donor has its type,
    any parameter of its type."""
    (path,) = TORCH_DUMP.glob("module_0002.*.before_optimizations.txt")
    header = path.read_text().splitlines()[0]
    said = {int(k) for k in re.findall(r"\((\d+), \{\}\)", header.split("buffer_donor=")[1])}
    text = _loaded(path)
    aliasing = read_aliasing(text)
    assert aliasing.donors == said == {1, 2, 3, 4, 7, 9, 10, 11}
    assert aliasing.aliased == {}
    signature = main_signature(text)
    for output, shape in enumerate(signature.results):
        same = [k for k, arg in enumerate(signature.args) if arg == shape]
        found = fed_back(aliasing, output, same)
        donated = [k for k in same if k in said]
        if donated:
            assert found == FedBack(tuple(donated), "donated")
        else:
            assert found == (FedBack(tuple(same), "type") if same else FedBack())


def test_by_type_alone_every_candidate_is_named_never_one():
    """matmul_2x4 (a real torch_xla module, two f32[8,8] parameters): its output compiles to
    another sharding under Shardy than under GSPMD; torch_xla's module does not say which
    parameter it becomes (`mhlo.input_output_alias = []`): both are named, none chosen."""
    text = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()
    assert "mhlo.input_output_alias = []" in text
    report = compare(text, convert(text, num_devices=8), 8)
    (difference,) = [d for d in report.boundary if d.kind == "output"]
    assert difference.fed_back_candidates == (0, 1)
    assert difference.fed_back_evidence == "type"
    assert difference.fed_back_as is None
    assert difference.retraces
    payload = difference_json(difference)
    assert payload["fed_back_candidates"] == [0, 1]
    assert (payload["fed_back_as"], payload["fed_back_evidence"]) == (None, "type")
    assert "may be fed back as any parameter of its type: 0, 1" in details_text(report)

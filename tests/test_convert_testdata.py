"""Every graph under testdata/ converts, and compiles to the same program as its original.

For each torch_xla dump graph, torch_xla module and JAX GSPMD lowering: convert, compile the
result on jaxlib's CPU client with the Shardy partitioner and the original with GSPMD on the
same number of devices, and require equal parameter shardings, equal output shardings where
the original annotates them, and equal results on random inputs.
"""

from __future__ import annotations

import re
import warnings

import jaxlib
import pytest

from shardy_convert import ShardyConvertError, ShardyConvertWarning, convert
from shardy_convert.commands.check import (
    Verdict,
    compare,
    compare_compiled,
    compile_module,
    read_converted,
    read_original,
)
from shardy_convert.formats import meshes
from tests.conftest import TESTDATA, manifest, real_graphs

GRAPHS = [pytest.param(e, graph, id=f"{e['path']}:{k}") for e, k, graph in real_graphs()]
OK = [p for p in GRAPHS if p.values[0]["expect"] == "ok"]
FAILING = [p for p in GRAPHS if p.values[0]["expect"] != "ok"]


def test_testdata_covers_the_issue_cases():
    cases = {p.values[0]["case"] for p in GRAPHS}
    assert len(OK) >= 30
    for needed in ("custom_device_ids_manual", "strided16", "shard_map_partial", "mesh3d_partial"):
        assert needed in cases


def test_testdata_covers_real_model_code():
    """Hugging Face and torchvision models (make testdata), and meshes that need sub-axes."""
    cases = {p.values[0]["case"] for p in OK}
    for needed in (
        "hf_llama_tp", "hf_llama_fsdp", "hf_mixtral_moe", "hf_gpt2_2d", "hf_bert_3d",
        "resnet18_spatial", "hf_gpt2_dynamo", "mixed_meshes_12",
    ):  # fmt: skip
        assert needed in cases


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "graph"), OK)
def test_graph_compiles_to_the_same_program(entry, graph, compiled_testdata):
    converted, gspmd, shardy = compiled_testdata(graph, entry["num_devices"])
    assert "mhlo.sharding" not in converted
    # The global mesh, or only maximal meshes for a program placed whole on one device.
    assert "sdy.mesh @mesh" in converted or "maximal" in entry["forms"]
    report = compare_compiled(gspmd, shardy, read_original(graph), read_converted(converted))
    if entry.get("xla_bug"):  # the bug the manifest names, measured on jaxlib 0.10.2
        # jaxlib 0.7.1 has it too; a jaxlib with it fixed compiles the same program. Never
        # "conversion differs".
        known = (Verdict.COMPILER_DIFFERS,)
        if jaxlib.__version__ != "0.10.2":
            known += (Verdict.SAME, Verdict.REASSOCIATED)
        assert report.verdict in known, str(report)
        return
    # Not just `report.ok`: a compiler difference would be an XLA bug met in our own testdata.
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED), str(report)


NAMED = [p for p in OK if p.values[0].get("mesh_file")]


@pytest.mark.parametrize(("entry", "graph"), NAMED)
def test_graph_on_the_programs_own_mesh_compiles_to_the_same_program(entry, graph):
    """On the meshes make_testdata recorded (record_meshes): the program's axis names, and the
    same program as GSPMD's."""
    recorded = meshes.read(TESTDATA / entry["mesh_file"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ShardyConvertWarning)
        converted = convert(graph, num_devices=entry["num_devices"], meshes=recorded)
    fallback = [w for w in caught if "fit none of the given meshes" in str(w.message)]
    if not fallback:
        assert recorded[0].axes[0][0] in converted  # e.g. '"data"=2'
    report = compare(graph, converted, entry["num_devices"])
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED), str(report)


def test_the_programs_meshes_are_recorded_beside_some_dumps():
    assert {p.values[0]["case"] for p in NAMED} >= {
        "matmul_2x4", "tp_mlp_train", "custom_device_ids_manual", "mixed_meshes_12"
    }  # fmt: skip


@pytest.mark.parametrize(("entry", "graph"), FAILING)
def test_graph_without_shardy_form_is_a_located_error(entry, graph):
    with pytest.raises(ShardyConvertError) as info:
        convert(graph, num_devices=entry["num_devices"])
    message = str(info.value)
    assert info.value.location, message
    assert entry["expect"].removeprefix("error: ") in message


TWINS = [
    pytest.param(e, id=e["path"])
    for e in manifest()
    if e["kind"] == "jax_gspmd" and e.get("twin") and e["expect"] == "ok"
]


@pytest.mark.slow
@pytest.mark.parametrize("entry", TWINS)
def test_jax_gspmd_converts_to_what_jax_lowers_with_shardy(entry):
    """Our conversion of JAX's GSPMD lowering and JAX's own Shardy lowering of the same program
    compile (both with Shardy) to the same parameter and output shardings."""
    n = entry["num_devices"]
    ours = convert((TESTDATA / entry["path"]).read_text(), num_devices=n)
    reference = (TESTDATA / entry["twin"]).read_text()
    a = compile_module(ours, n, shardy=True)
    b = compile_module(reference, n, shardy=True)
    assert a.parameters == b.parameters
    assert a.outputs == b.outputs


def test_compare_catches_a_moved_shard():
    """The check can fail: dropping the mesh's device order still compiles, but moves every
    shard of torch_xla's custom-order graph, and compare() names the parameters."""
    graph = (TESTDATA / "torch_xla" / "custom_device_ids_manual.mlir").read_text()
    converted = convert(graph, num_devices=8)
    wrong = re.sub(r", device_ids=\[[0-9, ]+\]", "", converted, count=1)
    wrong = re.sub(r", device_ids = dense<[^>]*> : tensor<8xi64>", "", wrong)
    assert wrong != converted
    report = compare(graph, wrong, 8)
    assert not report.ok
    assert any(d.startswith("parameter 0:") for d in report.differences), str(report)

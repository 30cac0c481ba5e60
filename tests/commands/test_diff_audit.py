"""`shardy-convert diff` of two sharding audit reports: by name, which tensors compiled to
other shardings (shardy_convert.commands.diff_audit), as the two runs of one program would
write them (GSPMD on torch_xla's runtime, Shardy through use_plugin)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from shardy_convert.cli.main import main
from shardy_convert.commands.diff_audit import diff_reports

GSPMD_ROWS = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"
SHARDY_ROWS = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"  # the same placement
SHARDY_COLS = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"


def tensor(name, compiled, spec, shape=(32, 32), marked=None, kind="parameter") -> dict:
    return {
        "name": name,
        "kind": kind,
        "shape": list(shape),
        "bytes": 4096,
        "marked": marked,
        "compiled": compiled,
        "marked_spec": None if marked is None else spec,
        "compiled_spec": spec,
    }


def report(*tensors) -> str:
    return json.dumps({"tensors": list(tensors), "findings": []})


def gspmd() -> str:
    return report(
        tensor("o_proj.weight", GSPMD_ROWS, ["model", None], marked=GSPMD_ROWS),
        tensor("exp_avg of o_proj.weight", GSPMD_ROWS, ["model", None], kind="optimizer_state"),
        tensor("norm.weight", "", "replicated", shape=(32,)),
        tensor("step of o_proj.weight", None, None, shape=(), kind="optimizer_state"),
    )


def shardy() -> str:
    return report(
        tensor("o_proj.weight", SHARDY_ROWS, ["model", None], marked=GSPMD_ROWS),
        tensor("exp_avg of o_proj.weight", SHARDY_COLS, [None, "model"], kind="optimizer_state"),
        tensor("norm.weight", "{replicated}", "replicated", shape=(32,)),
        tensor("step of o_proj.weight", None, None, shape=(), kind="optimizer_state"),
    )


def run(tmp_path, a: str, b: str):
    paths = []
    for name, text in (("gspmd.json", a), ("shardy.json", b)):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return CliRunner().invoke(main, ["diff", *paths])


def test_the_tensors_that_compiled_otherwise_by_name(tmp_path):
    result = run(tmp_path, gspmd(), shardy())
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == [
        "exp_avg of o_proj.weight: compiled: ('model', None) "
        f"{GSPMD_ROWS} vs (None, 'model') {SHARDY_COLS}",
        "DIFFERENT: 1 difference",
    ]


def test_respelled_placements_are_equal(tmp_path):
    # V1 vs V2 of one placement, "" vs {replicated}, a tensor on no device in both.
    same = shardy().replace(SHARDY_COLS, SHARDY_ROWS).replace('[null, "model"]', '["model", null]')
    result = run(tmp_path, gspmd(), same)
    assert result.exit_code == 0, result.output
    assert result.output == "EQUAL: 4 tensors compared\n"


def test_tensors_of_one_report_only_and_other_shapes_differ():
    a = report(tensor("w", "", "replicated"), tensor("only_a", "", "replicated"))
    b = report(tensor("w", "", "replicated", shape=(4,)), tensor("only_b", "", "replicated"))
    found = [str(d) for d in diff_reports(a, b).differences]
    assert found == [
        "w: shape: [32,32] vs [4]",
        "only_a: replicated vs no such tensor",
        "only_b: no such tensor vs replicated",
    ]


def test_a_different_mark_is_named_too():
    a = report(tensor("w", GSPMD_ROWS, ["model", None], marked=GSPMD_ROWS))
    b = report(tensor("w", GSPMD_ROWS, ["model", None], marked=""))
    (d,) = diff_reports(a, b).differences
    assert d.what == "w: marked"


@pytest.mark.parametrize(
    ("b", "message"),
    [
        ("module {}\n", "is a sharding audit report and"),
        ('{"tensors": [{"name": 1}], "findings": []}', "tensor 0: no 'kind'"),
    ],
)
def test_trouble_exits_2_with_the_reason(tmp_path, b, message):
    result = run(tmp_path, gspmd(), b)
    assert result.exit_code == 2
    assert message in result.output


def test_an_unparsable_sharding_is_located(tmp_path):
    bad = gspmd().replace(GSPMD_ROWS, "{devices=[4,1,2]0,1}", 1)
    result = run(tmp_path, bad, shardy())
    assert result.exit_code == 2
    assert "gspmd.json: error: o_proj.weight: " in result.output

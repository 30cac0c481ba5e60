"""`check`'s report as the user gets it: the verdict line, the cost table, the summary, the JSON
object (its exact shape, its numbers against the compiled programs), the `--max-cost-ratio`
gate and the progress line on a terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from shardy_convert.commands.check import compare_programs
from tests.conftest import TESTDATA
from tests.helpers import ESCAPE, MATMUL, SHARDY, on_a_terminal, run

TRAIN = TESTDATA / "torch_xla" / "tp_mlp_train.dump"  # a torch_xla training step, 2 graphs
# A reshard XLA can only do by replicating first: one involuntary rematerialization each side.
REMAT = (
    'func.func @main(%arg0: tensor<6x8x8xf32> {mhlo.sharding = "{devices=[1,1,8]<=[8]}"}) -> '
    '(tensor<6x8x8xf32> {mhlo.sharding = "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"}) {\n'
    '  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,1,1,4]<=[8] '
    'last_tile_dim_replicate}"} : (tensor<6x8x8xf32>) -> tensor<6x8x8xf32>\n'
    "  return %0 : tensor<6x8x8xf32>\n}\n"
)

GRAPH_KEYS = {"input", "graph", "verdict", "gspmd", "shardy", "boundary_differences"}
COST_TYPES = {
    "collectives": int,
    "collective_bytes": int,
    "temp_bytes": int,
    "flops": float,
    "rematerializations": int,
}
DIFFERENCE_KEYS = {"kind", "index", "type", "gspmd", "shardy", "annotated", "fed_back_as"}


def _cli(*args, tmp_path, level="2") -> subprocess.CompletedProcess:
    """`shardy-convert ARGS` in a fresh process, as a user runs it (no XLA_FLAGS; XLA's log
    level as given: the command must still see XLA's warnings)."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = level
    return subprocess.run(
        [sys.executable, "-m", "shardy_convert", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )


def _rematerializations_logged() -> bool:
    """Whether this jaxlib's XLA writes its rematerialization warning (0.10.2 does, 0.7.1 not)."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env |= {"TF_CPP_MIN_LOG_LEVEL": "1", "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    code = "from shardy_convert.commands.check.compiled import rematerializations_logged as r\n"
    code += "print(r())"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout.strip() == "True"


@pytest.fixture(scope="module")
def json_report(tmp_path_factory):
    """One `check --format json` run over a real training dump, a module, a module XLA must
    rematerialize, one without a Shardy form and one already Shardy."""
    tmp_path = tmp_path_factory.mktemp("json")
    (tmp_path / "remat.mlir").write_text(REMAT)
    result = _cli("check", "--format", "json", TRAIN, MATMUL, "remat.mlir", ESCAPE, SHARDY,
                  tmp_path=tmp_path)  # fmt: skip
    return result, json.loads(result.stdout)


def test_json_is_one_object_of_the_documented_shape(json_report):
    result, document = json_report
    assert result.returncode == 1, result.stderr  # the graph without a Shardy form
    assert set(document) == {"graphs", "summary"}
    places = [(g["input"], g["graph"]) for g in document["graphs"]]
    assert places == [
        (str(TRAIN), 0), (str(TRAIN), 1), (str(MATMUL), None), ("remat.mlir", None),
        (str(ESCAPE), 0), (str(SHARDY), None),
    ]  # fmt: skip
    for graph in document["graphs"]:
        assert GRAPH_KEYS <= set(graph), graph
        assert isinstance(graph["verdict"], str)
        compiled = graph["verdict"] not in ("error", "already Shardy")
        for side in ("gspmd", "shardy"):
            if not compiled:
                assert graph[side] is None
                continue
            cost = graph[side]
            for key, kind in COST_TYPES.items():
                want = (kind, type(None)) if key == "rematerializations" else kind
                assert isinstance(cost[key], want), (key, cost)
                assert not isinstance(cost[key], bool)
            assert cost["collectives"] == sum(k["count"] for k in cost["by_kind"].values())
            assert cost["collective_bytes"] == sum(k["bytes"] for k in cost["by_kind"].values())
        for difference in graph["boundary_differences"]:
            assert DIFFERENCE_KEYS <= set(difference)
    verdicts = [g["verdict"] for g in document["graphs"]]
    assert verdicts[-2:] == ["error", "already Shardy"]
    assert document["graphs"][-2]["error"].startswith(f"{ESCAPE}:graph 0:")


def test_json_numbers_are_the_compiled_programs(json_report, compiled_testdata):
    """The CLI's numbers for the training dump are those of the same graphs compiled here
    (test_check_cost checks those against the optimized HLO)."""
    from shardy_convert.formats import dump

    _, document = json_report
    graphs = dump.graphs(TRAIN.read_text())
    for entry, graph in zip(document["graphs"][:2], graphs):
        _, gspmd, shardy = compiled_testdata(graph.text, 8)
        report = compare_programs(gspmd, shardy, outputs="annotated")
        for side, cost in (("gspmd", report.gspmd), ("shardy", report.shardy)):
            got = entry[side]
            assert got["collectives"] == cost.collectives
            assert got["collective_bytes"] == cost.collective_bytes
            assert got["temp_bytes"] == cost.temp_bytes
            assert got["flops"] == cost.flops
            kinds = {k: (c.count, c.bytes) for k, c in cost.by_kind.items()}
            assert {k: (v["count"], v["bytes"]) for k, v in got["by_kind"].items()} == kinds
        assert len(entry["boundary_differences"]) == len(report.boundary)


def test_json_counts_xlas_rematerializations_even_when_its_log_level_hides_them(json_report):
    """Run with TF_CPP_MIN_LOG_LEVEL=2, which hides XLA's warnings: check asks for them."""
    _, document = json_report
    (remat,) = [g for g in document["graphs"] if g["input"] == "remat.mlir"]
    want = 1 if _rematerializations_logged() else None
    assert remat["gspmd"]["rematerializations"] == want
    assert remat["shardy"]["rematerializations"] == want
    if want:
        assert remat["verdict"] == "same program"
        others = [g for g in document["graphs"] if g["gspmd"] and g is not remat]
        assert all(g["shardy"]["rematerializations"] == 0 for g in others)


def test_summary_adds_up_the_graphs(json_report):
    _, document = json_report
    summary = document["summary"]
    compiled = [g for g in document["graphs"] if g["gspmd"]]
    assert summary["graphs"] == len(document["graphs"])
    assert sum(summary["verdicts"].values()) == len(document["graphs"])
    for side in ("gspmd", "shardy"):
        for key in ("collectives", "collective_bytes", "temp_bytes"):
            assert summary[side][key] == sum(g[side][key] for g in compiled)
    worst = [w for w in summary["worst"] if w["measure"] == "collective bytes"]
    ratios = sorted((g["ratios"]["collective_bytes"] for g in compiled), reverse=True)
    assert [w["ratio"] for w in worst] == ratios[: len(worst)]


# --- the terminal ---------------------------------------------------------------------------


def test_verdict_line_and_cost_table():
    result = run("check", "--no-reference", MATMUL)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert re.fullmatch(
        rf"{re.escape(str(MATMUL))}: same program[^:]*: 4 parameters, 1 output on 8 devices; "
        r"Shardy: \d+\.\d\dx GSPMD's collective bytes, \d+\.\d\dx temp memory",
        lines[0],
    ), lines[0]
    labels = [line.split()[0] for line in lines[1:] if line.strip()]
    assert labels[0] == "GSPMD"
    for label in ("all-gather", "collectives", "temp", "peak", "FLOPs", "rematerializations"):
        assert label in labels
    assert "graphs:" not in result.stdout  # one graph: no summary


@pytest.mark.parametrize(
    ("gspmd", "shardy", "clause"),
    [
        ((None, None), (None, None), "Shardy: collective bytes n/a, temp memory n/a"),
        ((0, 0), (0, 0), "Shardy: no collectives on either, no temp memory on either"),
        (
            (0, 0),
            (1500, 2_000_000),
            "Shardy: 1.5 KB of collectives where GSPMD has none, 2 MB of temp memory where "
            "GSPMD needs none",
        ),
        ((400, 100), (800, 150), "Shardy: 2.00x GSPMD's collective bytes, 1.50x temp memory"),
    ],
    ids=["unknown", "none-on-either", "only-shardy", "ratios"],
)
def test_cost_clause_says_each_measure_as_it_stands(gspmd, shardy, clause):
    """Each measure unknown, 0 on both sides, only on Shardy's side, or a ratio."""
    from shardy_convert.commands.check.cost import Collectives, Cost
    from shardy_convert.commands.check.render_text import cost_clause

    def cost(collective_bytes, temp_bytes):
        gathers = None if collective_bytes is None else Collectives(1, collective_bytes)
        return Cost(by_kind=gathers and {"all-gather": gathers}, temp_bytes=temp_bytes)

    assert cost_clause(cost(*gspmd), cost(*shardy)) == clause


def test_several_graphs_get_a_summary():
    result = run("check", "--no-reference", TRAIN)
    assert result.exit_code == 0, result.output
    tail = result.stdout.split("\n\n")[-1]
    assert tail.startswith("2 graphs: 2 same program")
    assert "most collective bytes relative to GSPMD:" in tail
    assert f"{TRAIN}:graph 1" in tail


# --- the gate -------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "nan"])
def test_max_cost_ratio_must_be_a_positive_number(bad):
    result = run("check", "--max-cost-ratio", bad, MATMUL)
    assert result.exit_code == 2
    assert "--max-cost-ratio" in result.output


def test_max_cost_ratio_fails_the_graph_that_costs_more_and_says_which_measure():
    """The limit just under the graph's own ratio fails it, naming graph and measure; just
    over both its ratios passes."""
    report = json.loads(run("check", "--format", "json", "--no-reference", MATMUL).stdout)
    ratios = report["graphs"][0]["ratios"]
    measured = ratios["collective_bytes"]
    under = run("check", "--no-reference", "--max-cost-ratio", f"{measured * 0.99}", MATMUL)
    assert under.exit_code == 1
    assert (
        f"{MATMUL}: error: Shardy's program has {measured:.2f}x GSPMD's collective bytes"
        in under.stderr
    ), under.stderr
    limit = max(ratios["collective_bytes"], ratios["temp_bytes"]) * 1.01
    over = run("check", "--no-reference", "--max-cost-ratio", f"{limit}", MATMUL)
    assert over.exit_code == 0, over.stderr


# --- progress on a terminal -----------------------------------------------------------------


def test_progress_on_a_terminal_never_shares_a_line_with_an_error(tmp_path):
    """stderr on a pseudo-terminal: the progress line is erased before each error, so the
    error reads from the start of its line; stdout (not a terminal) gets no progress."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    args = ["check", "--no-reference", MATMUL, ESCAPE]
    code, received, stdout = on_a_terminal(args, "stderr", env=env, cwd=tmp_path)
    terminal = received.decode().replace("\r\n", "\n")
    assert code == 1
    assert "\r" not in stdout
    assert "compiling" not in stdout
    assert "[1/2] compiling" in terminal
    shown = [line.split("\r")[-1].replace("\x1b[K", "") for line in terminal.split("\n")]
    errors = [line for line in shown if ": error: " in line]
    assert errors, terminal
    assert all(line.startswith(f"{ESCAPE}:graph 0:") for line in errors), terminal

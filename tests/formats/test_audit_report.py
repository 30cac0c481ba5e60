"""The sharding audit report as data, text and JSON (shardy_convert.formats.audit)."""

from __future__ import annotations

import json

import pytest

from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats.audit import (
    AuditFinding,
    AuditReport,
    TensorRow,
    from_json,
    looks_like_report,
)
from shardy_convert.sharding.partition_spec import parse_spec

ROWS = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"


def report() -> AuditReport:
    weight = TensorRow(
        "0.weight", "parameter", (64, 16), 4096, ROWS, ROWS,
        parse_spec("('model', None)"), parse_spec("('model', None)"), "f32", "M",
    )  # fmt: skip
    bias = TensorRow("0.bias", "parameter", (64,), 256, None, "", None, parse_spec("replicated"))
    step = TensorRow("step of 0.weight", "optimizer_state", (), 4, dtype="f32")
    finding = AuditFinding("0.bias", "unannotated-parameter", "warning", "never marked")
    return AuditReport([weight, bias, step], [finding], ["Mesh((2, 4), ('data', 'model'))"])


def test_json_has_exactly_the_issues_schema():
    value = json.loads(report().to_json())
    assert list(value) == ["tensors", "findings"]
    assert value["tensors"][0] == {
        "name": "0.weight",
        "kind": "parameter",
        "shape": [64, 16],
        "bytes": 4096,
        "marked": ROWS,
        "compiled": ROWS,
        "marked_spec": ["model", None],
        "compiled_spec": ["model", None],
    }
    assert value["tensors"][1]["compiled_spec"] == "replicated"
    assert value["tensors"][2]["compiled"] is None
    assert value["findings"] == [
        {
            "name": "0.bias",
            "rule": "unannotated-parameter",
            "severity": "warning",
            "message": "never marked",
        }
    ]


def test_json_reads_back_as_the_same_rows_and_findings():
    again = from_json(report().to_json())
    assert again.as_json() == report().as_json()
    assert again.tensor("0.weight").marked_spec == parse_spec(["model", None])
    assert again.tensor("step of 0.weight").parameter == "0.weight"
    assert again.tensor("step of 0.weight").key == "step"
    assert looks_like_report(report().to_json())
    assert not looks_like_report("module {}")
    assert not looks_like_report('{"meshes": []}')


def test_the_table_reads_like_inspects():
    text = str(report())
    lines = text.splitlines()
    assert lines[0] == "== sharding audit: 3 tensors on Mesh((2, 4), ('data', 'model'))"
    assert lines[1].split() == [
        "TENSOR", "KIND", "SHAPE", "BYTES", "MARKED", "COMPILED", "COMPILED", "(HLO)"
    ]  # fmt: skip
    assert lines[2].split()[:6] == [
        "0.weight", "parameter", "64x16xf32", "4096", "('model',", "None)"
    ]  # fmt: skip
    assert lines[3].split() == ["0.bias", "parameter", "64", "256", "-", "replicated", '""']
    assert "- (not on XLA)" in lines[4]
    assert lines[-2].split() == ["warning", "0.bias", "unannotated-parameter", "never", "marked"]
    assert lines[-1] == "3 tensors; findings: 0 errors, 1 warning"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "not an audit report: expected"),
        ("{", "no JSON"),
        ('{"tensors": [{"name": "w"}], "findings": []}', "tensor 0: no 'kind'"),
        (
            '{"tensors": [{"name": "w", "kind": "weights"}], "findings": []}',
            "kind 'weights' is none of parameter, buffer, optimizer_state",
        ),
        ('{"tensors": [], "findings": [{"name": "w"}]}', "finding 0: no 'rule'"),
    ],
)
def test_a_bad_report_is_a_located_error(text, message):
    with pytest.raises(ShardyConvertError, match=message) as caught:
        from_json(text, "run.json")
    assert caught.value.describe().startswith("run.json: error: ")


def test_a_row_with_a_bad_spec_names_it():
    row = dict(report().as_json()["tensors"][0], compiled_spec=[3])
    text = json.dumps({"tensors": [row], "findings": []})
    with pytest.raises(ShardyConvertError, match="tensor 0: a spec dim is None"):
        from_json(text, "run.json")

"""The audit's findings and its policy, without torch: rows as `audit()` builds them from a
live program (shardy_convert.plugin.audit.rules, .policy), the strings as torch_xla 2.9
printed them for the two-layer MLP of issue 26 (AdamW, weights marked, biases not)."""

from __future__ import annotations

import pytest

from shardy_convert.errors import ShardingContractError, ShardyConvertError, UsageError
from shardy_convert.formats.audit import AuditReport, TensorRow
from shardy_convert.plugin.audit.policy import DEFAULT_RULES, Policy, as_policy
from shardy_convert.plugin.audit.rules import findings
from shardy_convert.sharding import parse
from shardy_convert.sharding.mesh_fit import UserMesh
from shardy_convert.sharding.partition_spec import spec_on

MESH = UserMesh((("data", 2), ("model", 4)), label="Mesh((2, 4), ('data', 'model'))")
ROWS_ON = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"  # ('model', None)
COLS_ON = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"  # (None, 'model')
BIAS_ON = "{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"  # ('model',)


def row(name, shape, compiled, marked=None, kind="parameter", nbytes=None) -> TensorRow:
    """A row as audit() makes it: specs read on MESH."""

    def spec(hlo):
        return None if hlo is None else spec_on(parse(hlo), MESH, len(shape))

    size = 4
    for d in shape:
        size *= d
    return TensorRow(
        name, kind, shape, nbytes or size, marked, compiled, spec(marked), spec(compiled), "f32"
    )


def mlp_rows(state_of_weight: str = ROWS_ON) -> list[TensorRow]:
    return [
        row("0.weight", (64, 16), ROWS_ON, ROWS_ON),
        row("0.bias", (64,), BIAS_ON),
        row("2.weight", (16, 64), COLS_ON, COLS_ON),
        row("2.bias", (16,), "{replicated}"),
        row("step of 0.weight", (), None, kind="optimizer_state"),
        row("exp_avg of 0.weight", (64, 16), state_of_weight, kind="optimizer_state"),
        row("exp_avg of 0.bias", (64,), BIAS_ON, kind="optimizer_state"),
    ]


def found(rows, policy=None) -> set[tuple[str, str, str]]:
    return {(f.name, f.rule, f.severity) for f in findings(rows, policy or Policy(), ("M",))}


def test_the_mlp_of_the_issue_the_bias_propagation_sharded():
    assert found(mlp_rows()) == {
        ("0.bias", "unannotated-parameter", "warning"),
        ("0.bias", "small-sharded", "warning"),
        ("2.bias", "unannotated-parameter", "warning"),
        ("exp_avg of 0.bias", "small-sharded", "warning"),
    }


def test_messages_name_the_tensor_and_the_call_that_pins_it():
    by_rule = {(f.name, f.rule): f.message for f in findings(mlp_rows(), Policy())}
    assert by_rule[("0.bias", "unannotated-parameter")] == (
        "never marked, so its layout is the partitioner's choice (it holds ('model',)); pin "
        "it: xs.mark_sharding(model.get_parameter('0.bias'), mesh, (None,))"
    )
    small = by_rule[("exp_avg of 0.bias", "small-sharded")]
    assert small.startswith("256 bytes (under 4096) in 4 shards ('model',)")
    assert "optimizer.state[model.get_parameter('0.bias')]['exp_avg'], mesh, (None,)" in small


def test_a_moment_sharded_unlike_its_parameter_as_shardy_compiles_it():
    # Shardy's AdamW moment of a row-parallel weight: the transposed sharding.
    rows = mlp_rows(state_of_weight=COLS_ON)
    (finding,) = [f for f in findings(rows, Policy()) if f.rule == "state-unlike-parameter"]
    assert finding.name == "exp_avg of 0.weight"
    assert finding.message.startswith("holds (None, 'model'), its parameter ('model', None)")
    assert "['exp_avg'], mesh, ('model', None)) after optimizer.step()" in finding.message


def test_a_scalar_state_of_another_shape_is_not_compared():
    rows = [row("w", (4, 4), ROWS_ON, ROWS_ON), row("step of w", (), "", kind="optimizer_state")]
    assert not [f for f in findings(rows, Policy()) if f.rule == "state-unlike-parameter"]


def test_a_mark_the_compiled_step_did_not_keep_is_an_error():
    rows = [row("w", (64, 16), COLS_ON, marked=ROWS_ON)]
    (finding,) = findings(rows, Policy())
    assert (finding.rule, finding.severity) == ("mark-not-compiled", "error")
    assert finding.message.startswith("marked ('model', None) but holds (None, 'model')")


def test_replicated_spellings_are_one_placement():
    rows = [row("w", (4096, 4), "", marked="{replicated}")]
    assert findings(rows, Policy()) == []


def test_a_sharding_on_no_mesh_the_program_made():
    other = "{devices=[4,1,2]5,3,2,6,7,1,0,4 last_tile_dim_replicate}"  # a custom order
    r = TensorRow("w", "parameter", (64, 16), 4096, other, other, None, None)
    assert found([r]) == {("w", "foreign-mesh", "error")}
    (f,) = findings([r], Policy(), ("Mesh((2, 4), ('data', 'model'))",))
    assert "a view of no mesh the program made (Mesh((2, 4), ('data', 'model')))" in f.message


POLICY = """
small_tensor_bytes = 128

[rules]
unannotated-parameter = "off"
state-unlike-parameter = "error"

[specs]
"*.bias" = "replicated"
"2.weight" = "('model', None)"
"""


def test_a_policy_sets_specs_threshold_and_severities():
    policy = Policy.from_toml(POLICY)
    # 256 bytes of bias are not under 128: no small-sharded finding.
    assert found(mlp_rows(state_of_weight=COLS_ON), policy) == {
        ("0.bias", "policy", "error"),
        ("exp_avg of 0.bias", "policy", "error"),
        ("2.weight", "policy", "error"),
        ("exp_avg of 0.weight", "state-unlike-parameter", "error"),
    }
    messages = {f.name: f.message for f in findings(mlp_rows(), policy) if f.rule == "policy"}
    assert messages["2.weight"] == (
        "the policy's \"2.weight\" wants ('model', None), it holds (None, 'model') (marked "
        "(None, 'model')); pin it: xs.mark_sharding(model.get_parameter('2.weight'), mesh, "
        "('model', None))"
    )


def test_the_first_matching_pattern_decides():
    policy = Policy.from_toml('[specs]\n"0.*" = "replicated"\n"*.weight" = "(\'model\', None)"')
    assert str(policy.required("0.weight")[1]) == "replicated"
    assert str(policy.required("exp_avg of 2.weight")[1]) == "('model', None)"
    assert policy.required("2.bias") is None


def test_check_raises_on_the_errors_only():
    report = AuditReport(mlp_rows(), findings(mlp_rows(), Policy()))
    report.check()  # warnings only
    policy = Policy.from_toml(POLICY)
    report = AuditReport(mlp_rows(), findings(mlp_rows(), policy))
    with pytest.raises(ShardingContractError) as caught:
        report.check()
    assert len(caught.value.findings) == 3
    assert "the sharding contract is broken: 3 errors" in str(caught.value)
    assert "error: 2.weight: the policy's" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("threshold = 3", "unknown key 'threshold'"),
        ("small_tensor_bytes = -1", "byte count >= 0"),
        ('small_tensor_bytes = "1k"', "byte count >= 0"),
        ("[rules]\nno-such-rule = 'error'", "unknown rule 'no-such-rule'"),
        ("[rules]\npolicy = 'fatal'", "one of error, warning, off"),
        ('[specs]\n"*.bias" = "model"', r"specs.'\*\.bias': 'model' is no partition spec"),
        ("specs = 3", r"\[specs\] maps name patterns"),
        ("[specs", "not TOML"),
    ],
)
def test_bad_policies_are_located_errors(text, message):
    with pytest.raises(ShardyConvertError, match=message) as caught:
        Policy.from_toml(text, "sharding.toml")
    assert caught.value.describe().startswith("sharding.toml: error: policy: ")


def test_a_policy_is_given_as_a_path_a_dict_or_none(tmp_path):
    path = tmp_path / "sharding.toml"
    path.write_text(POLICY)
    assert as_policy(path) == as_policy(str(path)) == Policy.from_toml(POLICY)
    assert as_policy({"small_tensor_bytes": 1}).small_tensor_bytes == 1
    assert as_policy(None).rules == DEFAULT_RULES
    with pytest.raises(ShardyConvertError, match="cannot read the policy"):
        as_policy(tmp_path / "missing.toml")
    with pytest.raises(UsageError, match="policy must be a Policy"):
        as_policy(3)


# --- an audit without record(): the rules that need marks are not checked, never passed ----


def test_without_the_recorder_the_rules_that_need_marks_are_not_checked():
    from shardy_convert.plugin.audit.rules import not_checked

    policy = as_policy(None)
    unchecked = not_checked(policy, marks_recorded=False, meshes=())
    assert [n.rule for n in unchecked] == [
        "unannotated-parameter",
        "mark-not-compiled",
        "foreign-mesh",
        "policy",
    ]
    assert all("record()" in n.why or "mesh=mesh" in n.why for n in unchecked)
    given = not_checked(policy, marks_recorded=False, meshes=("Mesh((2, 4), ('a', 'b'))",))
    assert "policy" not in {n.rule for n in given}  # specs read on the given mesh
    assert not_checked(policy, marks_recorded=True, meshes=()) == []
    off = Policy.from_toml('[rules]\nmark-not-compiled = "off"\n')
    assert "mark-not-compiled" not in {n.rule for n in not_checked(off, False, ())}


def test_a_rule_not_checked_is_never_passed_and_survives_json():
    from shardy_convert.formats.audit import from_json
    from shardy_convert.plugin.audit.rules import not_checked

    rows = [row("w", (8, 8), "{devices=[4,1,2]<=[8] last_tile_dim_replicate}")]
    unchecked = not_checked(as_policy(None), marks_recorded=False, meshes=())
    skip = tuple(n.rule for n in unchecked)
    report = AuditReport(rows, findings(rows, as_policy(None), (), skip), [], None, unchecked)
    assert {f.rule for f in report.findings}.isdisjoint(skip)
    assert not report.marks_recorded
    assert "not recorded" in str(report)  # the marked column
    with pytest.raises(ShardingContractError, match="not checked: mark-not-compiled"):
        report.check()
    again = from_json(report.to_json())
    assert again.not_checked == report.not_checked
    recorded = AuditReport(rows, findings(rows, as_policy(None)), [], None)
    assert "not_checked" not in recorded.as_json()  # reports of recorded runs are as before

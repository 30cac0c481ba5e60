"""The import rules: pure checks on shardings and value types (no MLIR), which import-shardings
raises on and `inspect` reports."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from shardy_convert import ShardyConvertError, convert
from shardy_convert.cli.main import main
from shardy_convert.errors import ManualInputError, ModuleError
from shardy_convert.sharding import import_rules, parse
from shardy_convert.sharding.import_rules import ModuleFacts, Placed, ValueType

F32_8x8 = ValueType("tensor<8x8xf32>", 2)


def placed(kind: str, text: str, *types: ValueType, where: str = "here") -> Placed:
    return Placed(kind, text, parse(text), types, where=lambda: where)


def found(*items: Placed, num_devices: int | None = None) -> list[tuple[str, str, int | None]]:
    """(code, location, element) of every finding."""
    facts = ModuleFacts(items, num_devices, "num_devices")
    return [(f.code, f.location, f.element) for f in import_rules.check(facts)]


@pytest.mark.parametrize(
    ("item", "code"),
    [
        pytest.param(placed("arg", "{manual}", F32_8x8), "manual-at-boundary", id="manual_arg"),
        pytest.param(
            placed("result", "{devices=[2,1,2]<=[4] last_tile_dims={manual}}", F32_8x8),
            "manual-at-boundary",
            id="partly_manual_result",
        ),
        pytest.param(
            placed("op", "{{replicated}, {replicated}}", F32_8x8), "tuple-mismatch", id="arity"
        ),
        pytest.param(
            placed("arg", "{{replicated}, {replicated}}", F32_8x8), "tuple-on-value", id="tuple"
        ),
        pytest.param(
            placed("arg", "{devices=[2]<=[2]}", ValueType("!stablehlo.future", None)),
            "not-a-tensor",
            id="not_a_tensor",
        ),
        pytest.param(placed("arg", "{devices=[2]<=[2]}", F32_8x8), "rank-mismatch", id="rank"),
    ],
)
def test_each_rule_finds_its_case(item, code):
    assert [(c, where) for c, where, _ in found(item)] == [(code, "here")]


def test_valid_shardings_find_nothing():
    items = (
        placed("arg", "{devices=[2,2]<=[4]}", F32_8x8),
        placed("op", "{{replicated}, {maximal device=3}}", F32_8x8, F32_8x8),
        placed("result", "{replicated}", ValueType("!stablehlo.token", 0)),
        placed("module", "{devices=[4,1]<=[4]}"),
    )
    assert found(*items, num_devices=4) == []


def test_device_counts_quote_the_first_sharding_or_the_stated_count():
    first = placed("arg", "{devices=[2,2]<=[4]}", F32_8x8, where="1:1")
    other = placed("arg", "{devices=[8,1]<=[8]}", F32_8x8, where="2:2")
    (finding,) = import_rules.check(ModuleFacts((first, other)))
    assert finding.code == "device-count-conflict"
    assert finding.location == "2:2"
    assert '"{devices=[2,2]<=[4]}" at 1:1 says 4' in finding.message
    (stated,) = import_rules.check(ModuleFacts((first,), 8, "num_devices"))
    assert stated.location == "1:1"
    assert "but num_devices says 8" in stated.message


def test_maximal_device_must_be_one_of_the_devices():
    items = (
        placed("arg", "{devices=[2,2]<=[4]}", F32_8x8),
        placed("arg", "{maximal device=4}", F32_8x8, where="3:3"),
    )
    assert found(*items) == [("device-out-of-range", "3:3", None)]


def test_rank_mismatch_names_the_tuple_element():
    item = placed("op", "{{replicated}, {devices=[2]<=[2]}}", F32_8x8, F32_8x8)
    (finding,) = import_rules.check(ModuleFacts((item,)))
    assert finding.element == 1
    assert finding.message.startswith('element 1 of sharding "')


def test_locations_are_only_computed_for_findings():
    calls = []

    def where() -> str:
        calls.append(1)
        return "x"

    item = Placed("arg", "{replicated}", parse("{replicated}"), (F32_8x8,), where=where)
    assert import_rules.check(ModuleFacts((item,))) == []
    assert calls == []


def test_first_error_follows_rule_order():
    rank = placed("arg", "{devices=[2]<=[2]}", F32_8x8, where="1:1")
    manual = placed("result", "{manual}", F32_8x8, where="9:9")
    error = import_rules.first_error(ModuleFacts((rank, manual)))
    assert (error.code, error.location) == ("manual-at-boundary", "9:9")


# --- one rule set: the pass raises what inspect reports --------------------------------------

RANK = """\
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,2,2]<=[8]}"}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
"""  # noqa: E501
MANUAL = RANK.replace("{devices=[2,2,2]<=[8]}", "{manual}")


@pytest.mark.parametrize(
    ("text", "code", "error"),
    [(RANK, "rank-mismatch", ModuleError), (MANUAL, "manual-at-boundary", ManualInputError)],
)
def test_import_shardings_raises_what_inspect_reports(tmp_path, text, code, error):
    path = tmp_path / "m.mlir"
    path.write_text(text)
    with pytest.raises(ShardyConvertError) as raised:
        convert(text)
    assert type(raised.value) is error
    result = CliRunner().invoke(main, ["inspect", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    reported = [f for f in json.loads(result.stdout)["findings"] if f["code"] == code]
    assert [f["message"] for f in reported] == [raised.value.message]
    assert raised.value.location.startswith(reported[0]["location"] + ": ")

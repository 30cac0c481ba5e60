"""Fuzzing `convert` with malformed modules, bytecode and torch_xla dumps.

Each family of `fuzz_inputs` makes inputs from fixed seeds (the same on every run): not MLIR,
truncated text, corrupt bytecode, unknown dialects, device counts that disagree, sharding
rank != tensor rank, tuple shardings of the wrong length, manual regions that never close or
leak, bad attribute types, deep nesting, function declarations, and dumps cut short or with
no graph. Every failure must be a ShardyConvertError located at `LINE:COL` (and `graph N`
in a dump) that says what is wrong. The regressions below are the bugs this fuzzing found.
"""

from __future__ import annotations

import re
import warnings

import pytest

from shardy_convert import convert
from shardy_convert.errors import ModuleError, ShardyConvertError
from shardy_convert.formats import dump
from shardy_convert.options import parse_mesh
from tests.fuzz_inputs import DUMP_FAMILIES, MODULE_FAMILIES, Case, case, module_with

SEEDS = 16
_LOCATED = re.compile(r"^(graph \d+:)?(\d+):\d+: ")


def convert_quietly(data, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no sharding says how many devices": not the point
        return convert(data, **options)


def errors_of(c: Case) -> list[str]:
    """The messages `convert` (graph by graph for a dump) fails with; [] if it converts."""
    try:
        if not c.is_dump:
            convert_quietly(c.data)
            return []
        _, errors = dump.transform(c.data, lambda g: convert_quietly(g.text))
    except ShardyConvertError as e:
        return [e.describe()]
    return [e.describe() for e in errors]


def check_case(c: Case) -> None:
    messages = errors_of(c)
    if not messages:
        assert c.may_pass, f"{c.name}: converted, but must fail with {c.expect}"
        return
    for message in messages:
        located = _LOCATED.match(message)
        if isinstance(c.data, bytes):
            assert located or message.startswith("error: cannot read"), message
        else:
            assert located, f"not located: {message}"
        if c.is_dump and c.line is None and "graph" in c.expect:
            assert located.group(1), f"no graph named: {message}"
    message = messages[0]
    for part in c.expect:
        assert part in message, f"{part!r} not in {message}"
    if c.line is not None:
        assert int(_LOCATED.match(message).group(2)) == c.line, message


@pytest.mark.parametrize("seed", range(SEEDS))
@pytest.mark.parametrize("family", sorted(MODULE_FAMILIES))
def test_malformed_modules_fail_with_located_errors(family, seed):
    check_case(case(family, seed))


@pytest.mark.parametrize("seed", range(SEEDS))
@pytest.mark.parametrize("family", sorted(DUMP_FAMILIES))
def test_malformed_dumps_fail_with_located_errors(family, seed):
    check_case(case(family, seed))


# --- regressions: each was a crash, a stray exception or an unlocated error -----------------


def _module(body: str, arg_sharding: str = "{devices=[2,2]<=[4]}") -> str:
    return (
        "module {\n"
        f'  func.func @main(%arg0: tensor<8x8xf32> {{mhlo.sharding = "{arg_sharding}"}})'
        " -> tensor<8x8xf32> {\n" + body + "\n  }\n}\n"
    )


_F2S = (
    '    %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = "{manual}"}'
    " : (tensor<8x8xf32>) -> tensor<4x4xf32>"
)
_S2F_NO_SHARDING = (
    "    %1 = stablehlo.custom_call @SPMDShardToFullShape(%0)"
    " : (tensor<4x4xf32>) -> tensor<8x8xf32>"
)
_S2F = (
    "    %1 = stablehlo.custom_call @SPMDShardToFullShape(%0)"
    ' {mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<4x4xf32>) -> tensor<8x8xf32>'
)


def test_a_manual_region_with_nothing_inside_converts():
    # Was SIGSEGV: sdy.return kept a use of the erased @SPMDFullToShardShape.
    text = convert_quietly(_module(f"{_F2S}\n{_S2F}\n    return %1 : tensor<8x8xf32>"))
    assert "sdy.manual_computation" in text
    assert re.search(r"\(%arg1: tensor<4x4xf32>\) \{\s*sdy.return %arg1", text)


@pytest.mark.parametrize("nested", [False, True])
def test_function_declarations_are_refused_before_shardy_runs(nested):
    # Was SIGSEGV in sdy-lift-inlined-meshes / sdy-import-pipeline / sdy-close-shardings.
    decl = "func.func private @ext(%arg1: tensor<8x8xf32>) -> tensor<8x8xf32>"
    decl = f"module @inner {{ {decl} }}" if nested else decl
    text = _module("    return %arg0 : tensor<8x8xf32>").replace(
        "module {\n", f"module {{\n{decl}\n"
    )
    with pytest.raises(ModuleError, match=r"^2:.*@ext is only declared"):
        convert_quietly(text)


@pytest.mark.parametrize("depth", [257, 5_000, 100_000])
def test_deep_nesting_is_refused_before_mlir_parses_it(depth):
    # Was SIGSEGV (stack overflow in MLIR's recursive parser) from ~4,000 levels.
    text = "module attributes {x.a = " + "[" * depth + "]" * depth + "} {}"
    with pytest.raises(ModuleError, match=r"^1:281: brackets nest more than 256"):
        convert_quietly(text)


def test_nesting_counts_ignore_brackets_in_strings_and_arrows():
    text = _module("    return %arg0 : tensor<8x8xf32>", "{" * 300 + "}" * 300)
    with pytest.raises(ShardyConvertError, match="nested tuple shardings are not allowed"):
        convert_quietly(text)


@pytest.mark.parametrize(
    ("attr", "message"),
    [
        ("mhlo.sharding = 3 : i32", r"^2:19: arg 0 of @main: mhlo.sharding must be a str"),
        ('mhlo.sharding = "\\FF{"', r"^2:19: arg 0 of @main: mhlo.sharding .* not UTF-8"),
    ],
)
def test_sharding_attributes_that_are_not_text(attr, message):
    # Were ValueError ("Cannot cast attribute to StringAttr") and nanobind's RuntimeError.
    text = _module("    return %arg0 : tensor<8x8xf32>").replace(
        'mhlo.sharding = "{devices=[2,2]<=[4]}"', attr
    )
    with pytest.raises(ModuleError, match=message):
        convert_quietly(text)


def test_a_custom_call_target_that_is_not_utf8_is_just_another_target():
    body = (
        '    %0 = stablehlo.custom_call @"\\FF"(%arg0) {mhlo.sharding = "{replicated}"}'
        " : (tensor<8x8xf32>) -> tensor<8x8xf32>\n    return %0 : tensor<8x8xf32>"
    )
    assert "sdy.sharding" in convert_quietly(_module(body))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (  # was IndexError
            '    stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{replicated}"}'
            " : (tensor<8x8xf32>) -> ()\n    return %arg0 : tensor<8x8xf32>",
            r"^3:5: stablehlo.custom_call: @Sharding must take one operand and return",
        ),
        (  # was ValueError: min() arg is an empty sequence
            f"{_F2S}\n    return %arg0 : tensor<8x8xf32>",
            r"^3:10: stablehlo.custom_call: manual region never closes",
        ),
        (  # was KeyError
            f"{_F2S}\n{_S2F_NO_SHARDING}\n    return %1 : tensor<8x8xf32>",
            r"^4:10: stablehlo.custom_call: @SPMDShardToFullShape without an mhlo.sharding",
        ),
        (  # was KeyError: @Sharding without a sharding feeding the region
            '    %s = stablehlo.custom_call @Sharding(%arg0) {backend_config = ""}'
            f" : (tensor<8x8xf32>) -> tensor<8x8xf32>\n{_F2S.replace('(%arg0)', '(%s)')}\n"
            f"{_S2F}\n    return %1 : tensor<8x8xf32>",
            r"^3:10: stablehlo.custom_call: @Sharding custom call without a sharding",
        ),
        (  # was IndexError: `{}` on an op without results (now converts; here: a bad rank)
            f"{_F2S}\n{_S2F.replace('{devices=[2,2]<=[4]}', '{devices=[2,1,2]<=[4]}')}\n"
            "    return %1 : tensor<8x8xf32>",
            r'^4:10: stablehlo.custom_call: sharding "\{devices=\[2,1,2\]<=\[4\]\}" has 3',
        ),
    ],
)
def test_sharding_custom_calls_of_the_wrong_shape(body, message):
    with pytest.raises(ShardyConvertError, match=message):
        convert_quietly(_module(body))


def test_an_empty_tuple_sharding_on_an_op_without_results_converts():
    body = (
        '    stablehlo.custom_call @foo(%arg0) {mhlo.sharding = "{}"} : (tensor<8x8xf32>) -> ()\n'
        "    return %arg0 : tensor<8x8xf32>"
    )
    assert "sdy.sharding_per_value<[]>" in convert_quietly(_module(body))


@pytest.mark.parametrize("value", ['"x"', "0 : i32", "-3 : i64"])
def test_num_partitions_must_be_a_positive_integer(value):
    # Were ValueError ("Cannot cast attribute to IntegerAttr") and a raw MLIRError.
    text = _module("    return %arg0 : tensor<8x8xf32>").replace(
        "module {", f"module attributes {{mhlo.num_partitions = {value}}} {{"
    )
    with pytest.raises(ShardyConvertError, match=r"^1:1: module attribute mhlo.num_partitions"):
        convert_quietly(text)


def test_device_count_disagreement_is_located_at_the_second_sharding_and_quotes_both():
    # Was "error: shardings disagree on the device count: ..." with no location at all.
    text, _ = module_with(
        [
            ("arg", "{devices=[2,2]0,1,2,3}", (8, 8)),
            ("op", "{devices=[2,4]0,1,2,3,4,5,6,7}", (8, 8)),
        ]
    )
    with pytest.raises(ShardyConvertError) as info:
        convert_quietly(text)
    assert str(info.value) == (
        '3:11: stablehlo.custom_call: sharding "{devices=[2,4]0,1,2,3,4,5,6,7}" spans 8 '
        'devices but "{devices=[2,2]0,1,2,3}" at 2:19: arg 0 of @main says 4'
    )


def test_a_maximal_device_beyond_the_device_count_is_refused():
    # Was accepted: a mesh `<[], device_ids=[9223372036854775807]>` next to 4 devices.
    text, _ = module_with(
        [("arg", "{devices=[2,2]<=[4]}", (8, 8)), ("result", "{maximal device=4}", (8,))]
    )
    with pytest.raises(ShardyConvertError, match="on device 4, but the module runs on 4"):
        convert_quietly(text)


def test_errors_quote_the_v1_list_as_written_not_its_v2_rewrite():
    text, _ = module_with([("arg", "{devices=[2,2]0,2,1,3}", (8, 8, 8))])
    with pytest.raises(ShardyConvertError, match=r'"\{devices=\[2,2\]0,2,1,3\}" has 2 tile dims'):
        convert_quietly(text)


def test_text_that_is_not_utf8_is_located_at_the_bad_byte():
    with pytest.raises(ModuleError, match=r"^2:3: input is neither MLIR text"):
        convert_quietly(b"module {\n  \xff\n}\n")


def test_frontend_attributes_of_the_wrong_type_are_not_a_crash():
    text = _module("    return %arg0 : tensor<8x8xf32>").replace(
        "module {", "module attributes {mhlo.frontend_attributes = 7 : i32} {"
    )
    assert "sdy.mesh" in convert_quietly(text)


@pytest.mark.parametrize(
    ("mesh", "message"),
    [
        ('a"b=4', "expected NAME=SIZE"),  # was a raw MLIRError from `#sdy.mesh<...>` text
        ("a=" + "9" * 5000, "has size 9999"),  # was ValueError: int() of 5000 digits
        ("a=0", "has size 0"),
        ([("x y", 4)], "expected NAME=SIZE"),
    ],
)
def test_bad_mesh_hints_are_conversion_errors(mesh, message):
    with pytest.raises(ShardyConvertError, match=message):
        parse_mesh(mesh)


def test_a_bug_inside_a_pass_leaves_the_library_as_itself_and_the_cli_as_one_line(
    monkeypatch, tmp_path
):
    from click.testing import CliRunner

    from shardy_convert.cli.main import main
    from shardy_convert.passes import import_custom_calls

    def broken(*args):
        raise IndexError("index out of range")

    monkeypatch.setattr(import_custom_calls, "_sharding_custom_calls", broken)
    module = _module("    return %arg0 : tensor<8x8xf32>")
    with pytest.raises(IndexError, match="index out of range"):  # not disguised as bad input
        convert_quietly(module)
    path = tmp_path / "m.mlir"
    path.write_text(module)
    result = CliRunner().invoke(main, ["convert", str(path)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{path}: error: internal error: IndexError: index out of")
    assert result.stderr.endswith(" in broken)\n")  # where the bug is, for the bug report


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("## END_GRAPH\n", r"^1:1: ## END_GRAPH at line 1 ends no graph"),
        ("[X]\nTensorsGraphInfo:\n  f (a.py:1)\n", r"^2:1: no ## BEGIN_GRAPH"),
        (
            "## BEGIN_GRAPH\nmodule {}\n## BEGIN_GRAPH\nmodule {}\n## END_GRAPH\n",
            r"^graph 0:1:1: graph 0 starting at line 1 has no ## END_GRAPH before",
        ),
        (
            "## BEGIN_GRAPH\nmodule {}\n## END_GRAPH\n[X]\nTensorsGraphInfo:\n",
            r"^graph 1:5:1: the dump ends in the header of graph 1",
        ),
    ],
)
def test_broken_dump_structure_is_located(text, message):
    with pytest.raises(ShardyConvertError, match=message):
        dump.split(text)

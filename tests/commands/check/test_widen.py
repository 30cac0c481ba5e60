"""widen.py: the module with f32/bf16/f16 written f64, for the rerun that tells float noise
from a real difference: types rewritten where a type stands, hex constants re-encoded, string
literals kept (but torch_xla's xla_shape), refused where a program reads its float bits."""

from __future__ import annotations

import numpy as np
import pytest

from shardy_convert.commands.check.widen import widened
from shardy_convert.formats import dump
from shardy_convert.ir.legacy_i1 import i1_hex_for_parser
from shardy_convert.ir.parse import new_context, parse_module

from ...conftest import TESTDATA, real_graphs

CONSTANTS = """func.func @main(%arg0: tensor<4xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<bf16>)
    -> (tensor<4xf32>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  %2 = stablehlo.constant dense<"0x0000803F000000400000803F00000040"> : tensor<2xcomplex<f32>>
  %3 = stablehlo.constant dense<0x3F80> : tensor<bf16>
  %4 = stablehlo.constant dense<"0x0102"> : tensor<2xi8>
  %5 = stablehlo.add %arg0, %arg0 {xla_shape = "f32[4]{0}"} : tensor<4xf32> loc("f32 add")
  return %5, %2 : tensor<4xf32>, tensor<2xcomplex<f32>>
}
"""  # noqa: E501


def _parses(text: str) -> None:
    with new_context() as ctx:
        parse_module(i1_hex_for_parser(text), ctx)


def test_types_constants_and_xla_shape_become_f64_strings_stay():
    text, why = widened(CONSTANTS)
    assert why == ""
    _parses(text)
    assert "f32" not in text.replace('loc("f32 add")', "")
    assert "bf16" not in text
    assert 'loc("f32 add")' in text  # a name, not a type
    assert 'xla_shape = "f64[4]{0}"' in text
    assert "dense<0xFFF0000000000000> : tensor<f64>" in text  # -inf, as f64 bits
    assert "dense<0x3FF0000000000000> : tensor<f64>" in text  # bf16 1.0
    assert 'dense<"0x0102"> : tensor<2xi8>' in text  # integers as they are
    one_two = np.array([1.0, 2.0]).tobytes().hex().upper()
    assert f'dense<"0x{one_two}"> : tensor<2xf64>' in text
    assert f'dense<"0x{one_two * 2}"> : tensor<2xcomplex<f64>>' in text


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("%9 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>", "bitcast"),
        (
            "%9 = stablehlo.custom_call @lapack_sgetrf(%arg0) : (tensor<4xf32>) -> tensor<4xf32>",
            "@lapack_sgetrf may be a kernel",
        ),
        ("%9 = stablehlo.constant dense_resource<blob> : tensor<4xf32>", "dense_resource"),
    ],
)
def test_a_program_that_reads_its_float_bits_is_not_widened(line, why):
    text = CONSTANTS.replace("  return", f"  {line}\n  return")
    assert widened(text)[0] is None
    assert why in widened(text)[1]


def test_the_sharding_markers_do_not_stop_it():
    text = CONSTANTS.replace(
        "  return %5",
        '  %9 = stablehlo.custom_call @Sharding(%5) {mhlo.sharding = "{replicated}"} : '
        "(tensor<4xf32>) -> tensor<4xf32>\n  return %9",
    )
    assert widened(text)[0] is not None


def test_a_program_without_narrow_floats_has_nothing_to_widen():
    text = "func.func @main(%arg0: tensor<4xi32>) -> tensor<4xi32> {\n"
    text += "  return %arg0 : tensor<4xi32>\n}\n"
    assert widened(text) == (None, "it has no f32, bf16 or f16 values")


@pytest.mark.parametrize(
    "path",
    ["torch_xla/mlp_adamw.dump", "torch_xla/hf_llama4_complex.dump", "torch_xla/hf_llama_tp.dump"],
)
def test_real_graphs_widen_to_modules_that_parse(path):
    """AdamW's f64 hyperparameters, Llama-4's complex rotary, Llama's i1 masks and -inf
    constants: every graph widens, parses, and keeps no narrow float type."""
    for graph in dump.graphs((TESTDATA / path).read_text()):
        text, why = widened(graph.text)
        if why:  # a graph of integers only (Llama's position ids)
            assert why == "it has no f32, bf16 or f16 values"
            assert "xf32>" not in graph.text
            assert "<f32>" not in graph.text
            continue
        _parses(text)
        with new_context() as ctx:
            module = parse_module(i1_hex_for_parser(text), ctx)
            types = str(module.operation)
        assert "xf32>" not in types
        assert "<f32>" not in types


def test_every_real_graph_widens_or_says_why():
    for entry, k, graph in real_graphs():
        text, why = widened(graph)
        assert (text is None) == bool(why), (entry["path"], k)
        if text is not None:
            _parses(text)

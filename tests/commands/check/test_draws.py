"""draws.py: inputs drawn by what each argument is, read from real graphs (AdamW's second
moments and bias corrections positive, token ids inside the vocabulary), every element type a
real model uses, and the user's own values (`--inputs FILE.npz`)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from shardy_convert.commands.check.draws import (
    POSITIVE_RANGE,
    Draw,
    draw_inputs,
    input_draws,
    read_inputs,
    user_inputs,
)
from shardy_convert.commands.check.signature import main_signature
from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats import dump

from ...conftest import TESTDATA


def _graph(path: str, k: int) -> str:
    return [g.text for g in dump.graphs((TESTDATA / path).read_text())][k]


def test_adamw_second_moments_and_bias_corrections_are_drawn_positive():
    """mlp_adamw graph 1 (an AdamW step): `%44 = multiply %arg10, broadcast(%arg9)` is
    exp_avg_sq * beta2, `+ grad * grad * (1 - beta2)` (%arg8), then sqrt and a division by
    %arg13 (the bias correction's square root) plus eps (%arg12): each drawn positive. The
    gradient's square stops the walk: the weights, the batch and exp_avg stay N(0, 1)."""
    graph = _graph("torch_xla/mlp_adamw.dump", 1)
    draws = input_draws(graph)
    positive = {k for k, d in enumerate(draws) if d.kind == "positive"}
    assert {8, 9, 10, 12, 13} <= positive  # the second weight's moment and the scalars
    assert {16, 18, 20} <= positive  # the other parameters' second moments
    assert not positive & {0, 2, 4, 5, 7}  # batch, weights, labels, exp_avg
    assert "stablehlo.divide" in draws[13].why
    inputs = draw_inputs(main_signature(graph), draws, 0)
    for k in positive:
        assert (inputs[k] >= POSITIVE_RANGE[0]).all()
        assert (inputs[k] < POSITIVE_RANGE[1]).all()


def test_token_ids_are_drawn_inside_the_vocabulary():
    """hf_llama_tp: the ids (i64) reach a gather on the 128-row embedding through a convert
    and a reshape; RMSNorm's epsilon is fed to rsqrt."""
    graph = (TESTDATA / "torch_xla/hf_llama_tp.mlir").read_text()
    draws = input_draws(graph)
    index = [(k, d) for k, d in enumerate(draws) if d.kind == "index"]
    assert [(d.bound, d.why.split(" at ")[0]) for _, d in index] == [(128, "stablehlo.gather")]
    k = index[0][0]
    ids = draw_inputs(main_signature(graph), draws, 0)[k]
    assert ids.dtype == np.int64
    assert ids.min() >= 0
    assert ids.max() < 128
    assert ids.max() >= 8  # the whole vocabulary, not the default [0, 8)
    assert any(d.kind == "positive" and "rsqrt" in d.why for d in draws)


def test_a_power_by_a_constant_keeps_its_base_as_drawn():
    text = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<f32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<4xf32>
  %0 = stablehlo.power %arg0, %c : tensor<4xf32>
  %b = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.power %b, %arg1 : tensor<4xf32>
  %2 = stablehlo.add %0, %1 : tensor<4xf32>
  %3 = stablehlo.sqrt %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
"""  # noqa: E501
    assert [d.kind for d in input_draws(text)] == ["normal", "positive", "positive"]


def test_slices_and_scatters_bound_their_start_indices():
    text = """func.func @main(%arg0: tensor<10x4xf32>, %arg1: tensor<i32>, %arg2: tensor<i64>,
    %arg3: tensor<3x1xi32>, %arg4: tensor<3x4xf32>, %arg5: tensor<i32>) -> (tensor<2x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %arg0, %arg1, %z, sizes = [2, 4] : (tensor<10x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  %c = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<i32>
  %u = stablehlo.slice %arg4 [0:1, 0:4] : (tensor<3x4xf32>) -> tensor<1x4xf32>
  %1 = stablehlo.dynamic_update_slice %arg0, %u, %c, %z : (tensor<10x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<10x4xf32>
  %2 = "stablehlo.scatter"(%arg0, %arg3, %arg4) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<10x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  %d = stablehlo.convert %arg5 : (tensor<i32>) -> tensor<f32>
  %e = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> tensor<10x4xf32>
  %3 = stablehlo.divide %2, %e : tensor<10x4xf32>
  return %0, %1, %3 : tensor<2x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>
}
"""  # noqa: E501
    draws = input_draws(text)
    assert [(d.kind, d.bound) for d in draws] == [
        ("normal", 0), ("index", 9), ("index", 10), ("index", 10), ("normal", 0), ("positive", 0)
    ]  # fmt: skip
    inputs = draw_inputs(main_signature(text), draws, 3)
    assert 1 <= int(inputs[5]) < 8  # an integer divisor is never 0


@pytest.mark.parametrize(
    ("element", "dtype"),
    [
        ("f32", np.float32),
        ("bf16", ml_dtypes.bfloat16),
        ("f16", np.float16),
        ("f8E4M3FN", ml_dtypes.float8_e4m3fn),
        ("f8E5M2", ml_dtypes.float8_e5m2),
        ("f8E8M0FNU", ml_dtypes.float8_e8m0fnu),
        ("complex<f32>", np.complex64),
        ("complex<f64>", np.complex128),
        ("i1", np.bool_),
        ("i4", ml_dtypes.int4),
        ("ui4", ml_dtypes.uint4),
        ("ui8", np.uint8),
        ("ui64", np.uint64),
        ("i64", np.int64),
    ],
)
def test_every_element_type_a_real_model_uses_gets_values(element, dtype):
    text = f"func.func @main(%arg0: tensor<3x5x{element}>) -> tensor<3x5x{element}> {{\n"
    text += f"  return %arg0 : tensor<3x5x{element}>\n}}\n"
    signature = main_signature(text)
    assert signature.unrunnable() == []
    (value,) = draw_inputs(signature, [Draw()], 0)
    assert value.dtype == np.dtype(dtype)
    assert value.shape == (3, 5)
    if np.dtype(dtype).kind == "c":
        assert np.abs(value.imag).max() > 0  # both parts drawn
    if element == "f8E8M0FNU":  # no sign bit: a negative draw would be NaN
        assert not np.isnan(value.astype(np.float32)).any()


def test_a_type_without_values_is_named():
    text = (
        "func.func @main(%arg0: tensor<4xf32>, %arg1: !stablehlo.token) -> "
        "(tensor<4xf32>, !stablehlo.token) {\n  return %arg0, %arg1 : tensor<4xf32>, "
        "!stablehlo.token\n}\n"
    )
    assert main_signature(text).unrunnable() == [
        "parameter 1 (!stablehlo.token)",
        "output 1 (!stablehlo.token)",
    ]


# --- the user's values -------------------------------------------------------------------


MATMUL = (
    "func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xi32>) -> tensor<2x3xf32> {\n"
    "  return %arg0 : tensor<2x3xf32>\n}\n"
)


def test_user_values_by_name_by_position_and_by_graph(tmp_path):
    signature = main_signature(MATMUL)
    a, b = np.ones((2, 3), np.float64), np.arange(3)
    np.savez(tmp_path / "named.npz", arg0=a, arg1=b)
    np.savez(tmp_path / "positional.npz", a, b)
    np.savez(tmp_path / "graphs.npz", **{"graph 1/arg0": a * 2, "arg0": a, "arg1": b})
    for name in ("named", "positional"):
        found = user_inputs(read_inputs(tmp_path / f"{name}.npz"), signature, None, name)
        assert found[0].dtype == np.float32
        assert found[1].dtype == np.int32
        np.testing.assert_array_equal(found[1], b)
    arrays = read_inputs(tmp_path / "graphs.npz")
    assert user_inputs(arrays, signature, 1, "g")[0][0, 0] == 2.0  # graph 1's own first
    assert user_inputs(arrays, signature, 0, "g")[0][0, 0] == 1.0


def test_user_values_of_another_shape_or_missing_are_located_errors(tmp_path):
    signature = main_signature(MATMUL)
    np.savez(tmp_path / "bad.npz", arg0=np.ones((3, 2)), arg1=np.arange(3))
    with pytest.raises(
        ShardyConvertError,
        match=r"bad.npz: parameter 0 has shape \[3, 2\] where @main takes \[2, 3\]",
    ):
        user_inputs(read_inputs(tmp_path / "bad.npz"), signature, None, "bad.npz")
    np.savez(tmp_path / "short.npz", arg0=np.ones((2, 3)))
    with pytest.raises(ShardyConvertError, match=r"short\.npz: no array for parameter 1"):
        user_inputs(read_inputs(tmp_path / "short.npz"), signature, None, "short.npz")
    (tmp_path / "junk.npz").write_bytes(b"not numpy")
    with pytest.raises(ShardyConvertError, match="cannot read test inputs"):
        read_inputs(tmp_path / "junk.npz")

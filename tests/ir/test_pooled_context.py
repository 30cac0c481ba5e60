"""`convert` takes its context from the pool (ir/parse.py's `pooled_context`): a context is
reused by the next conversion, so nothing one conversion leaves in it, a failed one included,
may change what the next one writes."""

from __future__ import annotations

import threading
import warnings

import pytest

from shardy_convert import ShardyConvertError, convert
from shardy_convert.ir import compat, parse

from ..conftest import real_graph

pytestmark = pytest.mark.skipif(
    not compat.contexts_reusable(), reason="these bindings make a context per module"
)

HOSTILE = [
    'func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[3]0,1,2}"}) -> '
    "tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n",  # uneven
    "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg1\n}\n",  # bad
    'func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]0,0}"}) -> '
    "tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n",  # a device twice
]


def _fresh(text: str) -> str | bytes:
    """`convert` in a context of its own (the pool emptied first)."""
    with parse._idle_lock:
        parse._idle.clear()
    return convert(text, num_devices=8)


def test_a_reused_context_converts_as_a_fresh_one_after_failures():
    graphs = [real_graph(p)[1] for p in ("torch_xla/matmul_2x4.mlir", "jax/mesh3d.gspmd.mlir")]
    expected = [_fresh(g) for g in graphs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            for bad in HOSTILE:
                with pytest.raises(ShardyConvertError):
                    convert(bad, num_devices=8)
            assert [convert(g, num_devices=8) for g in graphs] == expected
    assert parse._idle, "the conversions gave their context back to the pool"


def test_contexts_are_renewed_and_never_shared_by_two_threads():
    _, graph = real_graph("torch_xla/matmul_2x4.mlir")
    expected = _fresh(graph)
    results: list = []

    def work():
        results.extend(convert(graph, num_devices=8) for _ in range(parse._CONTEXT_USES + 2))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * (3 * (parse._CONTEXT_USES + 2))
    assert all(used <= parse._CONTEXT_USES for _, used in parse._idle)

"""plugin/optimized_program.py: a compiled program's parameter and output shardings in the
caller's partition ids. The program is a real one, as the wrapper gets it to relabel: HF
Mixtral's MoE layer step of testdata/ converted and compiled with Shardy by the xla-cpu-pjrt
plugin (its output sharding a tuple of 70), its optimized program as PJRT hands it out."""

from __future__ import annotations

import random

import pytest

from shardy_convert import convert
from shardy_convert.plugin.optimized_program import relabel_program
from shardy_convert.sharding import parse
from shardy_convert.xla import compat
from tests.conftest import real_graph


@pytest.fixture(scope="module")
def program():
    from tests import pjrt_plugin

    entry, graph = real_graph("torch_xla/hf_mixtral_moe.dump", 9)
    n = entry["num_devices"]
    client = pjrt_plugin.get_client(n)
    portable = client.portable_artifact(convert(graph, num_devices=n))  # as a client sends it
    compiled = client.compile(portable, n, shardy=True)
    module = client._optimized_module(compiled.handle)
    return module.as_serialized_hlo_module_proto()


def _shardings(proto: bytes) -> list:
    module = compat.hlo_module_from_proto(proto)
    shardings = [module.spmd_output_sharding, *module.spmd_parameters_shardings]
    return [compat.sharding_from_proto(s) for s in shardings]


def _moved(sharding, order: list[int]) -> str:
    """`sharding` (XLA's) with device k named order[k], by the sharding algebra (`relabel`
    reads device ids as mesh positions: given the inverse order, k becomes order[k])."""
    inverse = [order.index(k) for k in range(len(order))]
    return str(parse(str(sharding)).relabel(tuple(inverse)))


@pytest.mark.parametrize("seed", range(3))
def test_every_sharding_is_relabelled_as_the_algebra_relabels_it(program, seed):
    order = list(range(8))
    random.Random(seed).shuffle(order)
    got = _shardings(relabel_program(program, "hlo", order))
    want = [_moved(s, order) for s in _shardings(program)]
    assert [parse(str(g)) for g in got] == [parse(w) for w in want]


def test_the_identity_order_only_spells_iota_forms_as_device_lists(program):
    again = relabel_program(program, "hlo", list(range(8)))
    assert [parse(str(s)) for s in _shardings(again)] == [
        parse(str(s)) for s in _shardings(program)
    ]
    assert "<=" not in " ".join(str(s) for s in _shardings(again))
    assert relabel_program(again, "hlo", list(range(8))) == again  # nothing left to rewrite

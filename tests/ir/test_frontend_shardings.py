"""The `xla.sdy.sharding` frontend attribute Tenstorrent's torch_xla fork writes beside
`mhlo.sharding` (`ir.frontend_shardings`), and Shardy's reduction kinds at the MLIR boundary."""

from __future__ import annotations

import pytest

from shardy_convert.errors import ModuleError
from shardy_convert.ir import compat
from shardy_convert.ir.bindings import ir
from shardy_convert.ir.frontend_shardings import (
    FRONTEND,
    pop_stated,
    stated_at,
    stated_shardings,
)
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.ir.sdy_attrs import check_reduction_kinds, sharding_from_attr
from shardy_convert.ir.walker import funcs
from shardy_convert.sharding.sdy import AxisRef, Mesh, TensorSharding

STATED = r'"#sdy.sharding<@mesh, [{\22mesh_idx_0\22}p0, {?}p1]>"'
MODULE = (
    'func.func @main(%arg0: tensor<8x8xf32> {mhlo.frontend_attributes = {keep = "1", '
    f'xla.sdy.sharding = {STATED}}}, mhlo.sharding = "{{devices=[8,1]<=[8]}}"}}) '
    "-> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.abs %arg0 {mhlo.frontend_attributes = "
    '{xla.sdy.sharding = "#sdy.sharding<@mesh, [{}p0, {}]>"}} : tensor<8x8xf32>\n'
    "  return %0 : tensor<8x8xf32>\n}\n"
)


@pytest.fixture
def module():
    with new_context() as ctx:
        yield parse_module(MODULE, ctx)


def test_stated_sharding_is_read_where_it_sits(module):
    main = funcs(module.operation)[0]
    text = stated_at(main, "arg", 0)
    (stated,) = stated_shardings(text)
    assert stated.mesh == "mesh"
    assert [d.priority for d in stated.dims] == [0, 1]
    assert [d.is_closed for d in stated.dims] == [True, False]
    assert stated.dims[0].axes == (AxisRef("mesh_idx_0"),)
    op = main.regions[0].blocks[0].operations[0]
    assert stated_at(op, "op", 0) == "#sdy.sharding<@mesh, [{}p0, {}]>"
    assert stated_at(main, "result", 0) is None


def test_pop_stated_takes_the_entry_and_keeps_the_others(module):
    main = funcs(module.operation)[0]
    with module.context:
        attrs = {e.name: e.attr for e in ir.DictAttr(ir.ArrayAttr(main.attributes["arg_attrs"])[0])}
        assert pop_stated(attrs).startswith("#sdy.sharding<@mesh")
        assert str(attrs[FRONTEND]) == '{keep = "1"}'
        assert pop_stated(attrs) is None
        op = main.regions[0].blocks[0].operations[0]
        assert pop_stated(op.attributes) is not None
        assert FRONTEND not in op.attributes  # nothing else was in it


def test_per_value_shardings_are_one_per_result(module):
    with module.context:
        said = stated_shardings('#sdy.sharding_per_value<[<@m, [{"a"}p1]>, <@m, []>]>')
    assert [len(s.dims) for s in said] == [1, 0]
    assert said[0].dims[0].priority == 1


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("#sdy.sharding<@mesh, [{p0}]>", "is no Shardy sharding"),
        ('#sdy.mesh<["a"=2]>', "is no #sdy.sharding or #sdy.sharding_per_value"),
    ],
)
def test_what_is_no_sharding_is_an_error(module, text, why):
    with module.context, pytest.raises(ModuleError, match=why):
        stated_shardings(text)


def test_priorities_and_reductions_are_read_back(module):
    with module.context:
        attr = ir.Attribute.parse('#sdy.sharding<@mesh, [{"a"}p2, {}]>')
        ts, _ = sharding_from_attr(attr, {"mesh": Mesh((("a", 2),))})
    assert ts.dims[0].priority == 2


def test_a_reduction_kind_this_jaxlib_cannot_write_names_it():
    ts = TensorSharding("mesh", (), unreduced=(AxisRef("a"),), reduction="max")
    if compat.has_reduction_kinds():
        check_reduction_kinds(ts, "x")  # nothing to say
        return
    with pytest.raises(ModuleError, match=f"jaxlib {compat.jaxlib_version()} cannot"):
        check_reduction_kinds(ts, "x")


def test_the_reduction_kind_feature_is_the_jaxlibs():
    from jaxlib.mlir._mlir_libs import _sdy

    assert compat.has_reduction_kinds() == hasattr(_sdy.TensorShardingAttr, "reduction_op")
    if compat.has_reduction_kinds():
        with new_context():
            attr = ir.Attribute.parse('#sdy.sharding<@m, [{}], unreduced=min{"a"}>')
            ts, _ = sharding_from_attr(attr, {"m": Mesh((("a", 2),))})
        assert ts.reduction == "min"

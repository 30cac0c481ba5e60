"""The XLA client's compatibility layer (`shardy_convert.xla.compat`): portable artifacts, a
compiled program's HLO module, XLA's sharding classes. Every test runs on whichever jaxlib is
installed; `make test` runs them on the oldest, the default and the newest supported release."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.xla import compat as xla_compat
from tests.ir.test_compat import SHARDED_ADD


def test_portable_artifact_round_trip_through_compat():
    with new_context() as ctx:
        module = parse_module(SHARDED_ADD, ctx)
        before = str(module)
        target = stablehlo.get_minimum_version()
        data = xla_compat.serialize_portable_artifact(
            formats.print_module(module, "bytecode"), target
        )
        assert formats.portable_version(data) == target
        back = str(formats.deserialize_portable(data, ctx))
    assert back == before


def test_hlo_module_from_proto_reads_a_compiled_programs_module():
    from jax._src import xla_bridge

    backend = xla_bridge.get_backend("cpu")
    text = (
        "module { func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n} }"
    )
    from jax._src.lib import xla_client as xc

    exe = backend.compile_and_load(text, xc.DeviceList(tuple(backend.devices()[:1])))
    proto = exe.hlo_modules()[0].as_serialized_hlo_module_proto()
    module = xla_compat.hlo_module_from_proto(proto)
    assert "add(" in module.to_string()


def test_hlo_sharding_module_holds_xlas_sharding_classes():
    from jaxlib import xla_client as xc

    module = xla_compat.hlo_sharding_module()
    assert module.HloSharding is xc.HloSharding
    assert module.OpSharding is xc.OpSharding

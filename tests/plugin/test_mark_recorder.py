"""The recorder's marks (plugin/torch_xla/mesh_recorder.py) without torch: torch_xla's
`_XLAC` and its `mark_sharding` modules are stood in for by objects with the same attributes,
the wrappers installed on them as `install()` installs them on torch_xla's."""

from __future__ import annotations

import gc
import logging
import types

import pytest

from shardy_convert.plugin.torch_xla import mesh_recorder

SPEC = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"


class Mesh:
    """What the recorder reads of a torch_xla Mesh."""

    def __init__(self, device_ids, mesh_shape, axis_names):
        self.device_ids, self.mesh_shape, self.axis_names = device_ids, mesh_shape, axis_names


class Tensor:
    """A tensor: something the marks can refer to weakly."""


@pytest.fixture
def torch_xla(monkeypatch):
    """(xlac, xla_sharding, spmd) stand-ins with the wrappers installed, and a fresh RECORDER."""
    monkeypatch.setattr(mesh_recorder, "RECORDER", mesh_recorder.MeshRecorder())
    held = {}
    xlac = types.SimpleNamespace(
        _xla_mark_sharding=lambda t, op_sharding: held.__setitem__(id(t), op_sharding),
        _get_xla_sharding_spec=lambda t: held.get(id(t), ""),
    )

    def mark_sharding(t, mesh, partition_spec):
        xlac._xla_mark_sharding(t, SPEC if partition_spec else "{replicated}")
        return t

    xla_sharding = types.SimpleNamespace(mark_sharding=mark_sharding)
    spmd = types.SimpleNamespace(mark_sharding=mark_sharding)
    original = mark_sharding
    mesh_recorder._wrap_marks(xlac, (xla_sharding, spmd))
    return xlac, xla_sharding, spmd, original


def test_a_mark_is_recorded_with_its_sharding_and_mesh(torch_xla):
    _, xla_sharding, spmd, _ = torch_xla
    mesh = Mesh(list(range(8)), (2, 4), ("data", "model"))
    t = Tensor()
    spmd.mark_sharding(t, mesh, ("model", None))
    mark = mesh_recorder.RECORDER.mark_of(t)
    assert mark.sharding == SPEC
    assert mark.mesh.axes == (("data", 2), ("model", 4))
    assert [m.axes for m in mesh_recorder.RECORDER.meshes()] == [mark.mesh.axes]
    assert xla_sharding.mark_sharding is spmd.mark_sharding  # both names wrapped, once


def test_the_last_mark_wins_and_other_tensors_have_none(torch_xla):
    _, _, spmd, _ = torch_xla
    mesh = Mesh(list(range(8)), (2, 4), ("data", "model"))
    t = Tensor()
    spmd.mark_sharding(t, mesh, ("model", None))
    spmd.mark_sharding(t, mesh, ())
    assert mesh_recorder.RECORDER.mark_of(t).sharding == "{replicated}"
    assert mesh_recorder.RECORDER.mark_of(Tensor()) is None


def test_a_mark_through_the_original_function_is_seen_without_its_mesh(torch_xla):
    # `from torch_xla.distributed.spmd import mark_sharding` before record(): the _XLAC
    # wrapper still sees the mark.
    *_, original = torch_xla
    t = Tensor()
    original(t, Mesh(list(range(8)), (8,), ("x",)), ("x",))
    assert mesh_recorder.RECORDER.mark_of(t) == mesh_recorder.Mark(SPEC, None)


def test_the_record_goes_with_the_tensor(torch_xla):
    _, _, spmd, _ = torch_xla
    t = Tensor()
    spmd.mark_sharding(t, Mesh(list(range(8)), (8,), ("x",)), ("x",))
    del t
    gc.collect()
    assert mesh_recorder.RECORDER._marks == {}


def test_installing_twice_wraps_once(torch_xla):
    xlac, xla_sharding, spmd, _ = torch_xla
    wrapped = xlac._xla_mark_sharding
    mesh_recorder._wrap_marks(xlac, (xla_sharding, spmd))
    assert xlac._xla_mark_sharding is wrapped


def test_a_failing_record_never_breaks_the_mark(torch_xla, caplog):
    xlac, _, spmd, _ = torch_xla

    def broken(t):
        raise RuntimeError("no spec")

    xlac._get_xla_sharding_spec = broken
    t = Tensor()
    with caplog.at_level(logging.WARNING, logger="shardy_convert.wrapper"):
        assert spmd.mark_sharding(t, Mesh(list(range(8)), (8,), ("x",)), ("x",)) is t
    assert "cannot record a mark: RuntimeError: no spec" in caplog.text
    assert mesh_recorder.RECORDER.mark_of(t) is None

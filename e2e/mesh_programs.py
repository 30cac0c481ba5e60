"""torch_xla programs for the plugin's mesh names and dumps (e2e/test_meshes.py): run like
programs.py's (run_program.py, a process each), on the built-in runtime and through the
wrapper with `use_plugin(dump_dir=...)`."""

from __future__ import annotations

import numpy as np
import torch

from .programs import CUSTOM_ORDER, _device, _mesh, _numpy, _seeded, _shard, _sync, llama_tp


def llama_tp_2x4() -> dict:
    """The HF Llama tensor-parallel loop on `Mesh(np.arange(8), (2, 4), ("data", "model"))`."""
    return llama_tp(list(range(8)))


def custom_order_4x2() -> dict:
    """Two steps of a small model on `Mesh(CUSTOM_ORDER, (4, 2), ("data", "model"))`: rows on
    "data", columns on "model", an annotated intermediate, reductions over each axis, the
    weights updated and fed back. No dot contracts a sharded dim and no gather: XLA's CPU
    partitioner computes those wrongly on explicit device lists, so the built-in runtime,
    which compiles them that way, is the reference here."""
    mesh = _mesh(CUSTOM_ORDER, (4, 2), ("data", "model"))
    x = _seeded(8, 16).to(_device())
    w = _seeded(16, 12).to(_device())
    _shard(x, mesh, ("data", None))
    _shard(w, mesh, (None, "model"))
    out = {}
    for step in range(2):
        h = torch.tanh(x @ w)
        _shard(h, mesh, ("data", "model"))
        rows = (h * 2.0 + 1.0).sum(dim=1)
        cols = (h * h).mean(dim=0)
        w = w - 0.1 * cols.unsqueeze(0)
        _shard(w, mesh, (None, "model"))
        _sync()
        out.update({f"rows.{step}": rows, f"cols.{step}": cols, f"w.{step}": w})
    return _numpy(out)


def meshes_that_do_not_fit() -> dict:
    """Two meshes of 6 devices, (2, 3) ("a", "b") and (3, 2) ("c", "d"): a graph on the first,
    one on the second, and one mixing them, whose shardings fit neither (2 and 3 do not
    divide each other): that graph gets the mesh inferred from its shardings."""
    m1 = _mesh(np.arange(6), (2, 3), ("a", "b"))
    m2 = _mesh(np.arange(6), (3, 2), ("c", "d"))
    x = _seeded(6, 12).to(_device())
    y = (_seeded(6, 12) * 0.5 + 1.0).to(_device())
    _shard(x, m1, ("a", "b"))
    _shard(y, m2, ("c", "d"))
    first = torch.sin(x) * 2.0
    _sync()
    second = torch.cos(y) + 1.0
    _sync()
    mixed = (first + second) @ (x - y).t()
    _shard(mixed, m1, ("b", None))
    _sync()
    return _numpy({"first": first, "second": second, "mixed": mixed})


PROGRAMS = {
    "llama_tp_2x4": (llama_tp_2x4, 8),
    "custom_order_4x2": (custom_order_4x2, 8),
    "meshes_that_do_not_fit": (meshes_that_do_not_fit, 6),
}

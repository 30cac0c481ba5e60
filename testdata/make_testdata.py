#!/usr/bin/env python3
"""Generate the real test inputs of shardy-convert.

Every file under testdata/torch_xla/ and testdata/jax/ is produced here by running the
real producers on the CPU -- torch 2.9.0 + torch-xla 2.9.0 (SPMD, virtual CPU devices) and
jax/jaxlib 0.10.2 -- never written by hand.

    python testdata/make_testdata.py                # every case, then verify
    python testdata/make_testdata.py --only fsdp shard_map_full
    python testdata/make_testdata.py --list
    python testdata/make_testdata.py --verify-only

Needs: torch==2.9.0 torch-xla==2.9.0 transformers==4.57.1 torchvision==0.24.0 jax==0.10.2
jaxlib==0.10.2 numpy in one venv: `make testdata` makes it (.venv-torch, the project's
torch-xla extra).

Each case runs in a subprocess of its own: torch_xla fixes its device count per process
(PJRT_DEVICE=CPU CPU_NUM_DEVICES=N), and JAX reads XLA_FLAGS at import.

Outputs (a contract, read by the tests):
  torch_xla/<name>.dump   the dump torch_xla writes with XLA_STABLEHLO_COMPILE=1
                          XLA_SAVE_TENSORS_FILE=... XLA_SAVE_TENSORS_FMT=stablehlo, every
                          graph kept; only the absolute file paths of the Python frames in the
                          graph headers are rewritten to package-relative ones.
  torch_xla/<name>.mlir   xm.get_stablehlo([outputs]) of the same program (one module).
  torch_xla/<name>.hlo.pb torch_xla's serialized HloModuleProto of the same graph
                          (_XLAC._get_xla_tensors_hlo_proto), what a PJRT plugin compiles
                          when XLA_STABLEHLO_COMPILE is not set.
  torch_xla/<name>.meshes.json  the meshes the program created, recorded by
                          shardy_convert.torch_xla.record_meshes (cases with meshes=True);
                          the manifest entries of its files name it as "mesh_file".
  jax/<name>.gspmd.mlir   jax.jit(...).lower(...).as_text() with jax_use_shardy_partitioner=False
  jax/<name>.shardy.mlir  the same with jax_use_shardy_partitioner=True (the reference; none
                          for programs JAX's Shardy lowering cannot express, e.g. maximal)
  <dir>/<name>.xla_dump/  what XLA itself writes with XLA_FLAGS=--xla_dump_to=DIR
                          --xla_dump_hlo_as_text --xla_dump_hlo_as_proto in the producer's
                          run (torch_xla without XLA_STABLEHLO_COMPILE; JAX with Shardy off):
                          per compiled module `module_NNNN.<name>.before_optimizations.txt`
                          (HLO text) and `.hlo.pb` (an HloProto), the optimized module and
                          XLA's reports; JAX adds `module_NNNN.<name>/module.mlir` (the
                          program JAX handed to PJRT). Kept as written except code generation
                          (`*.ll`, `*.o`, `*_kernel_module-*.mlir`: dropped) and absolute
                          paths (debug_options' xla_dump_to, rewritten); the children of
                          these cases import this file by a relative path from the
                          repository root so that JAX records package-relative file names.
  manifest.json           one entry per file (see `manifest_entry`).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SELF = os.path.abspath(__file__)
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:  # the children (also those started from the root: see run_child)
    sys.path.insert(0, ROOT)

import small_models  # the model code shared with bench/ and e2e/

TORCH_DIR = os.path.join(HERE, "torch_xla")
JAX_DIR = os.path.join(HERE, "jax")
MANIFEST = os.path.join(HERE, "manifest.json")
MANUAL_ESCAPES = "error: manual value escapes"


# --------------------------------------------------------------------------------------
# Case registry
# --------------------------------------------------------------------------------------


class Case:
    def __init__(
        self,
        name,
        kind,
        fn,
        num_devices,
        description,
        mlir=False,
        hlo=False,
        shardy=True,
        xla_dump=False,
        meshes=False,
        xla_bug=None,
    ):
        self.name = name
        self.kind = kind  # "torch_xla" | "jax"
        self.fn = fn
        self.num_devices = num_devices
        self.description = description
        self.mlir = mlir
        self.hlo = hlo
        self.shardy = shardy  # jax: also lower with the Shardy partitioner (the reference twin)
        self.xla_dump = xla_dump  # keep XLA's own --xla_dump_to directory (see the docstring)
        self.meshes = meshes  # record the program's meshes beside its dump
        # A known bug of jaxlib's CPU partitioner the program hits (the manifest's "xla_bug": on
        # that jaxlib `check` must find a compiler difference, not a conversion one).
        self.xla_bug = xla_bug


CASES: dict[str, Case] = {}


def torch_case(
    name,
    num_devices,
    description,
    mlir=False,
    hlo=False,
    xla_dump=False,
    meshes=False,
    xla_bug=None,
):

    def deco(fn):
        CASES[name] = Case(
            name,
            "torch_xla",
            fn,
            num_devices,
            description,
            mlir,
            hlo,
            xla_dump=xla_dump,
            meshes=meshes,
            xla_bug=xla_bug,
        )
        return fn

    return deco


def jax_case(name, description, num_devices=8, shardy=True, xla_dump=False):

    def deco(fn):
        CASES[name] = Case(
            name, "jax", fn, num_devices, description, shardy=shardy, xla_dump=xla_dump
        )
        return fn

    return deco


# --------------------------------------------------------------------------------------
# torch_xla cases (run inside a child process, PJRT_DEVICE=CPU, CPU_NUM_DEVICES=N)
#
# Each returns {"mesh": {...}, "mlir": str | None, "notes": str (optional)}.
# --------------------------------------------------------------------------------------


_tx = small_models.spmd  # torch_xla in SPMD mode, seeded: a namespace of the modules


def _mesh_info(mesh):
    ids = [int(i) for i in mesh.device_ids.flatten()]
    return {
        "names": list(mesh.axis_names),
        "shape": [int(s) for s in mesh.mesh_shape],
        "device_ids": None if ids == list(range(len(ids))) else ids,
    }


def _rand(t, *shape):
    """A deterministic CPU tensor moved to the XLA device."""
    return t.torch.randn(*shape).to(t.dev)


@torch_case(
    "linear_retrace",
    2,
    "pytorch/xla#9755: nn.Linear(8, 8), weight sharded ('model', None) on mesh (1, 2) "
    "('data', 'model'), forward through torch.compile(backend='openxla'), 3 SGD training "
    "steps (unsharded tensors are '' on the first step and '{replicated}' after dispatch)",
)
def case_linear_retrace():
    t = _tx()
    torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.arange(2), (1, 2), ("data", "model"))
    model = torch.nn.Linear(8, 8).to(t.dev)
    xs.mark_sharding(model.weight, mesh, ("model", None))
    compiled = torch.compile(model, backend="openxla")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x = _rand(t, 4, 8)
        y = _rand(t, 4, 8)
        loss = small_models.mse_step(compiled, opt, x, y)
        t.torch_xla.sync()
    loss.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": None}


def _matmul_notebook(t, mesh):
    """The SPMD notebook: tensors with (0,1), (1,0), (0,None), (None,1) specs, matmul and
    elementwise multiply, one sharding annotation on an intermediate (@Sharding)."""
    torch, xs = t.torch, t.xs
    a = _rand(t, 8, 16)
    b = _rand(t, 16, 8)
    c = _rand(t, 8, 8)
    d = _rand(t, 8, 8)
    xs.mark_sharding(a, mesh, (0, 1))
    xs.mark_sharding(b, mesh, (1, 0))
    xs.mark_sharding(c, mesh, (0, None))
    xs.mark_sharding(d, mesh, (None, 1))
    ab = a @ b
    xs.mark_sharding(ab, mesh, (1, 0))  # annotation on an intermediate -> @Sharding
    out = ab * c + torch.relu(d)
    out = out @ d.T
    mlir = t.xm.get_stablehlo([out])
    out.cpu()
    return mlir


@torch_case(
    "matmul_2x2",
    4,
    "SPMD notebook on mesh (2, 2): specs (0,1), (1,0), (0,None), (None,1), matmul, "
    "elementwise multiply, a mark_sharding on an intermediate; output read with .cpu()",
    mlir=True,
)
def case_matmul_2x2():
    t = _tx()
    mesh = t.xs.Mesh(t.np.arange(4), (2, 2), ("x", "y"))
    return {"mesh": _mesh_info(mesh), "mlir": _matmul_notebook(t, mesh)}


@torch_case(
    "matmul_2x4",
    8,
    "SPMD notebook on mesh (2, 4): specs (0,1), (1,0), (0,None), (None,1), matmul, "
    "elementwise multiply, a mark_sharding on an intermediate; output read with .cpu()",
    mlir=True,
    meshes=True,
)
def case_matmul_2x4():
    t = _tx()
    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("x", "y"))
    return {"mesh": _mesh_info(mesh), "mlir": _matmul_notebook(t, mesh)}


# A fixed permutation of 0..7 that is not a transpose of a reshaped arange (no V2 form).
CUSTOM_IDS_8 = [3, 6, 0, 5, 1, 7, 2, 4]


@torch_case(
    "custom_device_ids_manual",
    8,
    f"Mesh (2, 4) ('data', 'model') with custom device_ids {CUSTOM_IDS_8} (not an iota transpose), "
    "tensors sharded on it, two enable_manual_sharding/disable_manual_sharding regions: "
    "one straight on an input tensor (spec ('data', 'model'), local cumsum), one on an "
    "intermediate (spec (None, 'model'), partially replicated); the global result is "
    "used afterwards",
    mlir=True,
    meshes=True,
)
def case_custom_device_ids_manual():
    t = _tx()
    torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.array(CUSTOM_IDS_8), (2, 4), ("data", "model"))
    x = _rand(t, 8, 16)
    w = _rand(t, 16, 8)
    xs.mark_sharding(w, mesh, ("model", None))
    # Region 1 on device data: @SPMDFullToShardShape directly on a func argument.
    local = xs.enable_manual_sharding(x, ("data", "model"), mesh=mesh).global_tensor
    local = torch.sin(torch.cumsum(local, dim=1)) * 3.0  # on the (4, 4) local shard
    x2 = xs.disable_manual_sharding(local, ("data", "model"), x.shape, mesh=mesh).global_tensor
    # Region 2 on an intermediate: @Sharding, then @SPMDFullToShardShape.
    y = x2 * 2.0 + 1.0
    local = xs.enable_manual_sharding(y, (None, "model"), mesh=mesh).global_tensor
    local = local - local.mean(dim=0, keepdim=True)  # on the (8, 4) local shard
    z = xs.disable_manual_sharding(local, (None, "model"), y.shape, mesh=mesh).global_tensor
    del local  # no manual tensor may stay alive: it would become a graph output
    out = (z @ w).relu()
    xs.mark_sharding(out, mesh, (None, "data"))
    mlir = t.xm.get_stablehlo([out])
    out.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": mlir}


@torch_case(
    "manual_escape",
    8,
    "Mesh (2, 4) with an enable_manual_sharding region whose manual (local-shape) tensor "
    "is still alive at torch_xla.sync(): the graph returns a {manual} value from main "
    "(torch_xla runs it; jaxlib's GSPMD compile aborts: Check failed: !IsManualLeaf())",
    mlir=True,
)
def case_manual_escape():
    t = _tx()
    _torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    x = _rand(t, 8, 16)
    xs.mark_sharding(x, mesh, ("data", "model"))
    local = xs.enable_manual_sharding(x + 1.0, ("data", "model"), mesh=mesh).global_tensor
    local = local * 2.0
    z = xs.disable_manual_sharding(local, ("data", "model"), x.shape, mesh=mesh).global_tensor
    out = z.sum(dim=1)
    mlir = t.xm.get_stablehlo([out, local])
    t.torch_xla.sync()  # syncs every live tensor, the manual `local` too
    out.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": mlir}


@torch_case(
    "tp_mlp_train",
    8,
    "Tensor-parallel MLP Linear(16,32)->GELU->Linear(32,16) on mesh (2, 4) "
    "('data', 'model'): column-parallel then row-parallel weights, batch on 'data', "
    "2 training steps (MSE loss, backward, SGD step); the HloModuleProto of the second "
    "step's graph too (what a PJRT plugin compiles without XLA_STABLEHLO_COMPILE)",
    mlir=True,
    hlo=True,
    meshes=True,
)
def case_tp_mlp_train():
    t = _tx()
    mesh, hlo, mlir, _loss = _tp_mlp_train(t)
    return {"mesh": _mesh_info(mesh), "mlir": mlir, "hlo": base64.b64encode(hlo).decode()}


def _tp_mlp_train(t):
    """The tp_mlp_train program: (mesh, HloModuleProto and get_stablehlo text of the second
    step's graph, loss)."""
    torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    model = small_models.tp_mlp(16, 32, mesh, dev=t.dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    mlir = hlo = None
    for step in range(2):
        x = _rand(t, 8, 16)
        y = _rand(t, 8, 16)
        xs.mark_sharding(x, mesh, ("data", None))
        xs.mark_sharding(y, mesh, ("data", None))
        loss = small_models.mse_step(model, opt, x, y)
        if step == 1:
            mlir = t.xm.get_stablehlo([loss, *list(model.parameters())])
            hlo = t.torch_xla._XLAC._get_xla_tensors_hlo_proto([loss, *list(model.parameters())])
        t.torch_xla.sync()
    loss.cpu()
    return mesh, hlo, mlir, loss


@torch_case(
    "tp_mlp_xla_dump",
    8,
    "the tp_mlp_train program (tensor-parallel MLP, 2 SGD steps, mesh (2, 4)) run with "
    "XLA_FLAGS=--xla_dump_to: the HLO text and HloProto of every module XLA compiled "
    "(training steps, torch_xla's ReplicateShardedData), as a user gets them",
    xla_dump=True,
)
def case_tp_mlp_xla_dump():
    t = _tx()
    mesh, _, _, _ = _tp_mlp_train(t)
    return {"mesh": _mesh_info(mesh)}


@torch_case(
    "transformer_block",
    8,
    "Pre-LN transformer block (hidden 32, 4 heads, MLP 64) forward+backward on mesh "
    "(2, 4) ('fsdp', 'tp'): params FSDP x TP (column/row), input (4, 8, 32) sharded on "
    "batch, activation annotations on q/k/v heads",
    mlir=True,
)
def case_transformer_block():
    t = _tx()
    xs = t.xs
    mesh = xs.Mesh(t.np.arange(8), (2, 4), ("fsdp", "tp"))
    B, S, H = 4, 8, 32
    Block = small_models.pre_ln_block(mesh, H, 4, 64, B, S, out_spec=("fsdp", None, None))
    model = Block().to(t.dev)
    small_models.shard_block(model, mesh)
    x = _rand(t, B, S, H)
    xs.mark_sharding(x, mesh, ("fsdp", None, None))
    out = model(x)  # alive at the sync: an output of its graph
    loss = out.pow(2).mean()
    mlir = small_models.grads_stablehlo(loss, model)
    t.torch_xla.sync()
    loss.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": mlir}


@torch_case(
    "mesh3d_partial",
    8,
    "3-D mesh (2, 2, 2) ('x', 'y', 'z') with partial replication: specs ('x', None), "
    "(None, ('y', 'z')), ('z', 'x'), ('y', None, None), an intermediate annotated "
    "(None, 'z')",
    mlir=True,
)
def case_mesh3d_partial():
    t = _tx()
    _torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.arange(8), (2, 2, 2), ("x", "y", "z"))
    a = _rand(t, 8, 8)
    b = _rand(t, 8, 8)
    c = _rand(t, 8, 8)
    d = _rand(t, 4, 8, 8)
    xs.mark_sharding(a, mesh, ("x", None))
    xs.mark_sharding(b, mesh, (None, ("y", "z")))
    xs.mark_sharding(c, mesh, ("z", "x"))
    xs.mark_sharding(d, mesh, ("y", None, None))
    ab = a @ b
    xs.mark_sharding(ab, mesh, (None, "z"))
    out = (ab * c).unsqueeze(0) + d
    out2 = out.sum(dim=0) @ c.T
    mlir = t.xm.get_stablehlo([out, out2])
    t.torch_xla.sync()
    out.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": mlir}


@torch_case(
    "strided16",
    16,
    "16 devices, mesh (4, 4) ('a', 'b') with strided device_ids "
    "arange(16).reshape(4,4).T.flatten() (a transposed iota); specs (0,1), (1,None), "
    "(None,0), (('a','b'), None)",
    mlir=True,
)
def case_strided16():
    t = _tx()
    _torch, xs = t.torch, t.xs
    ids = t.np.arange(16).reshape(4, 4).T.flatten()
    mesh = xs.Mesh(ids, (4, 4), ("a", "b"))
    a = _rand(t, 8, 8)
    b = _rand(t, 8, 8)
    c = _rand(t, 8, 8)
    d = _rand(t, 16, 8)
    xs.mark_sharding(a, mesh, (0, 1))
    xs.mark_sharding(b, mesh, (1, None))
    xs.mark_sharding(c, mesh, (None, 0))
    xs.mark_sharding(d, mesh, (("a", "b"), None))
    out = (a @ b) * c
    out2 = d @ out.T
    xs.mark_sharding(out2, mesh, ("b", "a"))
    mlir = t.xm.get_stablehlo([out, out2])
    t.torch_xla.sync()
    out2.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": mlir}


@torch_case(
    "fsdp",
    8,
    "torch_xla SpmdFullyShardedDataParallel around an MLP Linear(16,32)->ReLU->"
    "Linear(32,8) on mesh (8, 1) ('fsdp', 'tensor'), input sharded on batch, default "
    "shard_output, one training step (SGD)",
)
def case_fsdp():
    t = _tx()
    torch, xs = t.torch, t.xs
    from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
        SpmdFullyShardedDataParallel as FSDPv2,
    )

    mesh = xs.Mesh(t.np.arange(8), (8, 1), ("fsdp", "tensor"))

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(16, 32)
            self.fc2 = torch.nn.Linear(32, 8)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    model = FSDPv2(MLP(), mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = _rand(t, 16, 16)
    xs.mark_sharding(x, mesh, ("fsdp", None))
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    t.torch_xla.sync()
    loss.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": None}


@torch_case(
    "torch_compile",
    8,
    "An MLP Linear(16,32)->GELU->Linear(32,16) run through torch.compile(backend="
    "'openxla') (dynamo) on mesh (2, 4) ('data', 'model'): sharded params, inputs sharded "
    "on batch, mark_sharding_with_gradients inside the compiled forward (dynamo breaks the "
    "graph there: the annotation becomes a resharding graph), two calls",
)
def case_torch_compile():
    t = _tx()
    torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(16, 32)
            self.fc2 = torch.nn.Linear(32, 16)

        def forward(self, x):
            h = torch.nn.functional.gelu(self.fc1(x))
            # dynamo-traceable annotation (the xla::aot_mark_sharding custom op)
            h = xs.mark_sharding_with_gradients(h, mesh, ("data", "model"))
            return self.fc2(h)

    model = MLP().to(t.dev)
    xs.mark_sharding(model.fc1.weight, mesh, ("model", None))
    xs.mark_sharding(model.fc2.weight, mesh, (None, "model"))
    compiled = torch.compile(model, backend="openxla")
    with torch.no_grad():
        for _ in range(2):
            x = _rand(t, 8, 16)
            xs.mark_sharding(x, mesh, ("data", None))
            out = compiled(x)
            out.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": None}


# --------------------------------------------------------------------------------------
# Real model code (Hugging Face transformers 4.57, torchvision): tiny configs, random init,
# no downloads. Each is one training step (forward, backward, optimizer step) dumped by
# torch_xla; LLM masks and rotary halves become i1 constants that torch_xla 2.9 prints in
# the bit-packed hex of its MLIR (see shardy_convert/ir/legacy_i1.py).
# --------------------------------------------------------------------------------------


def _lm_train_step(t, model, ids, mask=None):
    """One SGD step of a causal/masked LM on `ids`; returns get_stablehlo of loss + grads."""
    opt = t.torch.optim.SGD(model.parameters(), lr=0.01)
    out = small_models.lm_forward(model, ids, mask)  # its logits: an output of the synced graph
    mlir = small_models.grads_stablehlo(out.loss, model)
    opt.step()
    t.torch_xla.sync()
    out.loss.cpu()
    return mlir


def _hf_lm_case(t, mesh, model, rules, batch, *, length=16, mask=False, keep_mlir=False):
    """The HF LM cases' common shape: the model (random init) on the device with its
    parameters sharded by `rules`, a (batch, length) i64 batch of ids (and an all-ones
    attention mask) on mesh axis 'data', one SGD training step. Random numbers are drawn in
    this order (model init, ids), so the dumps stay what they were."""
    model = model.to(t.dev)
    inputs = small_models.lm_inputs(model, mesh, rules, batch, length, dev=t.dev, mask=mask)
    mlir = _lm_train_step(t, model, *inputs)
    return {"mesh": _mesh_info(mesh), "mlir": mlir if keep_mlir else None}


@torch_case(
    "hf_llama_tp",
    8,
    "HF transformers LlamaForCausalLM (hidden 32, 1 layer, 4 heads, 2 KV heads, vocab 128) "
    "from a config, random init, one SGD training step on mesh (2, 4) ('data', 'model'): "
    "Megatron tensor parallelism (q/k/v/gate/up column-parallel, o/down row-parallel, "
    "embedding and lm_head on 'model'), batch (4, 16) of i64 ids and an i64 attention mask "
    "on 'data'; rotary halves are i1 constants printed in bit-packed hex",
    mlir=True,
)
def case_hf_llama_tp():
    t = _tx()
    from transformers import LlamaForCausalLM

    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    model = LlamaForCausalLM(small_models.llama_config())
    return _hf_lm_case(t, mesh, model, small_models.LLAMA_MEGATRON, 4, mask=True, keep_mlir=True)


@torch_case(
    "hf_llama_fsdp",
    8,
    "HF transformers LlamaForCausalLM (tiny config, random init) wrapped in torch_xla's "
    "SpmdFullyShardedDataParallel (FSDPv2) on mesh (8, 1) ('fsdp', 'tensor'), logits sharded "
    "on batch, batch (8, 16) of i64 ids on 'fsdp', one SGD training step",
)
def case_hf_llama_fsdp():
    t = _tx()
    xs = t.xs
    from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
        SpmdFullyShardedDataParallel as FSDPv2,
    )
    from transformers import LlamaForCausalLM

    mesh = xs.Mesh(t.np.arange(8), (8, 1), ("fsdp", "tensor"))

    def shard_output(output, mesh):
        xs.mark_sharding(output.logits, mesh, ("fsdp", None, None))

    model = FSDPv2(
        LlamaForCausalLM(small_models.llama_config()).to(t.dev),
        mesh=mesh,
        shard_output=shard_output,
    )
    ids = t.torch.randint(0, 128, (8, 16)).to(t.dev)
    xs.mark_sharding(ids, mesh, ("fsdp", None))
    _lm_train_step(t, model, ids)
    return {"mesh": _mesh_info(mesh), "mlir": None}


@torch_case(
    "hf_mixtral_moe",
    8,
    "HF transformers MixtralForCausalLM (hidden 32, 1 layer, 4 experts, top-2 routing, "
    "random init) on mesh (2, 4) ('data', 'model'): attention and every expert's w1/w3 "
    "column-parallel, w2 row-parallel, router replicated, batch (2, 8) on 'data', one SGD "
    "training step (dynamic routing splits it into several graphs)",
)
def case_hf_mixtral_moe():
    t = _tx()
    from transformers import MixtralConfig, MixtralForCausalLM

    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    cfg = MixtralConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=64,
    )
    rules = [
        (
            ("q_proj.weight", "k_proj.weight", "v_proj.weight", "w1.weight", "w3.weight"),
            ("model", None),
        ),
        (("o_proj.weight", "w2.weight"), (None, "model")),
    ]
    return _hf_lm_case(t, mesh, MixtralForCausalLM(cfg), rules, 2, length=8)


@torch_case(
    "hf_gpt2_2d",
    8,
    "HF transformers GPT2LMHeadModel (n_embd 32, 1 layer, 4 heads, vocab 128, dropout 0, "
    "random init) on mesh (2, 4) ('data', 'model'): c_attn/c_fc column-parallel (Conv1D "
    "weights are (in, out)), c_proj row-parallel, token embedding on 'model', batch (4, 16) "
    "on 'data', one SGD training step",
    mlir=True,
)
def case_hf_gpt2_2d():
    t = _tx()
    from transformers import GPT2Config, GPT2LMHeadModel

    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    # No dropout: random numbers are drawn differently per partitioner (values would differ).
    cfg = GPT2Config(
        vocab_size=128,
        n_positions=32,
        n_embd=32,
        n_layer=1,
        n_head=4,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    rules = small_models.GPT2_MEGATRON
    return _hf_lm_case(t, mesh, GPT2LMHeadModel(cfg), rules, 4, keep_mlir=True)


@torch_case(
    "hf_bert_3d",
    8,
    "HF transformers BertForMaskedLM (hidden 32, 1 layer, 4 heads, vocab 128, dropout 0, "
    "random init) "
    "on the 3-D mesh (2, 2, 2) ('data', 'fsdp', 'tensor') with partial replication: q/k/v "
    "and intermediate ('tensor', 'fsdp'), attention and output dense ('fsdp', 'tensor'), "
    "word embeddings (None, 'tensor'), batch (4, 16) of i64 ids and an i64 attention mask "
    "on 'data' (replicated over 'fsdp' and 'tensor'), one SGD training step",
)
def case_hf_bert_3d():
    t = _tx()
    from transformers import BertConfig, BertForMaskedLM

    mesh = t.xs.Mesh(t.np.arange(8), (2, 2, 2), ("data", "fsdp", "tensor"))
    cfg = BertConfig(
        vocab_size=128,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    rules = [
        (
            ("query.weight", "key.weight", "value.weight", "intermediate.dense.weight"),
            ("tensor", "fsdp"),
        ),
        (("attention.output.dense.weight", "output.dense.weight"), ("fsdp", "tensor")),
        (("word_embeddings.weight",), (None, "tensor")),
    ]
    return _hf_lm_case(t, mesh, BertForMaskedLM(cfg), rules, 4, mask=True)


@torch_case(
    "resnet18_spatial",
    8,
    "torchvision resnet18(num_classes=10) (random init) on mesh (2, 2, 2) ('data', 'h', "
    "'w'): images (4, 3, 32, 32) sharded spatially ('data', None, 'h', 'w'), labels on "
    "'data', one SGD training step (cross-entropy)",
)
def case_resnet18_spatial():
    t = _tx()
    torch, xs = t.torch, t.xs
    import torchvision

    mesh = xs.Mesh(t.np.arange(8), (2, 2, 2), ("data", "h", "w"))
    model = torchvision.models.resnet18(num_classes=10).to(t.dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = _rand(t, 4, 3, 32, 32)
    y = torch.randint(0, 10, (4,)).to(t.dev)
    xs.mark_sharding(x, mesh, ("data", None, "h", "w"))
    xs.mark_sharding(y, mesh, ("data",))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    t.torch_xla.sync()
    loss.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": None}


@torch_case(
    "hf_gpt2_dynamo",
    8,
    "HF transformers GPT2LMHeadModel (tiny, random init) forward through "
    "torch.compile(backend='openxla') (dynamo) on mesh (2, 4) ('data', 'model'): c_attn "
    "column-parallel, batch (4, 16) on 'data', two inference calls",
)
def case_hf_gpt2_dynamo():
    t = _tx()
    torch, xs = t.torch, t.xs
    from transformers import GPT2Config, GPT2LMHeadModel

    mesh = xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    cfg = GPT2Config(
        vocab_size=128, n_positions=32, n_embd=32, n_layer=1, n_head=4, use_cache=False
    )
    model = GPT2LMHeadModel(cfg).to(t.dev).eval()
    small_models.shard_params(model, mesh, [(("c_attn.weight",), (None, "model"))])
    compiled = torch.compile(lambda ids: model(input_ids=ids).logits, backend="openxla")
    with torch.no_grad():
        for _ in range(2):
            ids = torch.randint(0, 128, (4, 16)).to(t.dev)
            xs.mark_sharding(ids, mesh, ("data", None))
            compiled(ids).cpu()
    return {"mesh": _mesh_info(mesh), "mlir": None}


@torch_case(
    "mixed_meshes_12",
    12,
    "Two torch_xla meshes over the same 12 devices, (3, 4) ('a', 'b') and (4, 3) ('c', 'd'): "
    "no common factorization, so the converted mesh keeps one 12-device axis and every "
    "sharding uses sub-axes of it (both orientations); matmuls and adds mixing the meshes",
    mlir=True,
    meshes=True,
)
def case_mixed_meshes_12():
    t = _tx()
    torch, xs = t.torch, t.xs
    m1 = xs.Mesh(t.np.arange(12), (3, 4), ("a", "b"))
    m2 = xs.Mesh(t.np.arange(12), (4, 3), ("c", "d"))
    x = _rand(t, 12, 24)
    w = _rand(t, 24, 12)
    y = _rand(t, 12, 12)
    xs.mark_sharding(x, m1, ("a", "b"))
    xs.mark_sharding(w, m2, ("c", "d"))
    xs.mark_sharding(y, m2, (None, "c"))
    h = torch.tanh(x @ w)
    xs.mark_sharding(h, m1, ("b", None))
    out = h + y
    out2 = out @ y.T
    xs.mark_sharding(out2, m2, ("d", None))
    mlir = t.xm.get_stablehlo([out, out2])
    t.torch_xla.sync()
    out2.cpu()
    return {"mesh": _mesh_info(m1), "mlir": mlir}


@torch_case(
    "mlp_adamw",
    8,
    "issue 24's case: a two-layer MLP Linear(64,256)->GELU->Linear(256,64) trained with AdamW "
    "(lr 1e-3, weight decay 0.01) on mesh (4, 2) ('data', 'model'): first weight and bias "
    "column-parallel, second weight row-parallel, batch (64, 64) on 'data', 4 training steps "
    "(MSE loss): AdamW's step counts and second moments are graph inputs, its update turns "
    "reduction-order noise in near-zero gradients into whole steps",
    meshes=True,
)
def case_mlp_adamw():
    t = _tx()
    torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.arange(8), (4, 2), ("data", "model"))
    model = small_models.tp_mlp(64, 256, mesh, dev=t.dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    for _ in range(4):
        x = _rand(t, 64, 64)
        y = _rand(t, 64, 64)
        xs.mark_sharding(x, mesh, ("data", None))
        xs.mark_sharding(y, mesh, ("data", None))
        loss = small_models.mse_step(model, opt, x, y)
        t.torch_xla.sync()
    loss.cpu()
    return {"mesh": _mesh_info(mesh), "mlir": None}


CUSTOM_ORDER_DOT = [6, 2, 1, 7, 3, 0, 5, 4]


@torch_case(
    "xla_bug_custom_order_dot",
    8,
    "a dot whose contracting dim is sharded on 'data' of mesh (2, 4) ('data', 'model') in the "
    f"custom device order {CUSTOM_ORDER_DOT}: x (4, 8) on (None, 'data'), w (8, 16) on "
    "('data', 'model'), "
    "tanh(x @ w); the notes compare torch_xla's own 8-device run with eager PyTorch",
    mlir=True,
    xla_bug="jaxlib 0.10.2's CPU partitioner computes wrong all-reduce groups for a dot whose "
    "contracting dim is sharded on a mesh with a custom device order, GSPMD and Shardy alike",
)
def case_xla_bug_custom_order_dot():
    t = _tx()
    torch, xs = t.torch, t.xs
    mesh = xs.Mesh(t.np.array(CUSTOM_ORDER_DOT), (2, 4), ("data", "model"))
    x_cpu, w_cpu = torch.randn(4, 8), torch.randn(8, 16)
    x, w = x_cpu.to(t.dev), w_cpu.to(t.dev)
    xs.mark_sharding(x, mesh, (None, "data"))
    xs.mark_sharding(w, mesh, ("data", "model"))
    y = torch.tanh(x @ w)
    mlir = t.xm.get_stablehlo([y])
    t.torch_xla.sync()
    diff = float((y.cpu() - torch.tanh(x_cpu @ w_cpu)).abs().max())
    notes = f"torch_xla's own run vs eager PyTorch: max abs diff {diff:.3g}"
    return {"mesh": _mesh_info(mesh), "mlir": mlir, "notes": notes}


@torch_case(
    "hf_llama4_complex",
    8,
    "HF transformers Llama4ForCausalLM (Llama4TextConfig: hidden 32, 1 dense layer, 4 heads, "
    "2 KV heads, head dim 8, vocab 128, random init), whose rotary embedding multiplies in "
    "complex<f32> (torch.polar, view_as_complex), one SGD training step on mesh (2, 4) "
    "('data', 'model'): q/k/v/gate/up column-parallel, o/down row-parallel, batch (2, 16) of "
    "i64 ids on 'data'",
)
def case_hf_llama4_complex():
    t = _tx()
    from transformers import Llama4ForCausalLM, Llama4TextConfig

    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    cfg = Llama4TextConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        intermediate_size_mlp=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=64,
        moe_layers=[],
        attention_chunk_size=64,
        use_cache=False,
    )
    rules = [
        (
            (
                "q_proj.weight",
                "k_proj.weight",
                "v_proj.weight",
                "gate_proj.weight",
                "up_proj.weight",
            ),
            ("model", None),
        ),
        (("o_proj.weight", "down_proj.weight"), (None, "model")),
    ]
    return _hf_lm_case(t, mesh, Llama4ForCausalLM(cfg), rules, 2)


# --------------------------------------------------------------------------------------
# JAX cases (child process, XLA_FLAGS=--xla_force_host_platform_device_count=8)
#
# Each builds fresh and returns (jitted function, example args, mesh).
# --------------------------------------------------------------------------------------


def _jx():
    import types

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    return types.SimpleNamespace(np=np, jax=jax, jnp=jnp, Mesh=Mesh, NS=NamedSharding, P=P)


def _jmesh(j, shape, names):
    devs = j.np.array(j.jax.devices()[: int(j.np.prod(shape))]).reshape(shape)
    return j.Mesh(devs, names)


def _jargs(j, *shapes):
    rng = j.np.random.default_rng(0)
    return [rng.standard_normal(s).astype(j.np.float32) for s in shapes]


@jax_case(
    "shard_map_full",
    "jax.shard_map over both axes of mesh (2, 4) ('x', 'y'): local matmul then psum over 'y'",
)
def jcase_shard_map_full(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))

    def body(a, b):
        return j.jax.lax.psum(a @ b, "y")

    def f(a, b):
        c = j.jax.shard_map(
            body, mesh=mesh, in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None)
        )(a, b)
        return j.jnp.tanh(c)

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("x", "y")), NS(mesh, P("y", None))),
        out_shardings=NS(mesh, P("x", None)),
    )
    return fn, _jargs(j, (8, 16), (16, 8)), mesh


@jax_case(
    "shard_map_partial",
    "jax.shard_map manual over 'x' only (axis_names={'x'}) of mesh (2, 4); 'y' stays "
    "automatic (sharding constraint on 'y' inside), psum over 'x'",
)
def jcase_shard_map_partial(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))

    def body(a):
        a = j.jax.lax.with_sharding_constraint(a * 2.0, P(None, "y"))
        return j.jax.lax.psum(a, "x")

    def f(a):
        return (
            j.jax.shard_map(
                body, mesh=mesh, in_specs=P("x", None), out_specs=P(None, None), axis_names={"x"}
            )(a)
            + 1.0
        )

    fn = j.jax.jit(f, in_shardings=NS(mesh, P("x", "y")), out_shardings=NS(mesh, P(None, "y")))
    return fn, _jargs(j, (8, 16)), mesh


@jax_case(
    "scan_loop",
    "jax.lax.scan with a carry sharded P('x', None) on mesh (2, 4), a weight P(None, "
    "'y') and with_sharding_constraint inside the loop body",
)
def jcase_scan_loop(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))
    wsc = j.jax.lax.with_sharding_constraint

    def f(c, w, xs):

        def step(c, x):
            h = wsc(c @ w, NS(mesh, P("x", "y")))
            c = wsc(j.jnp.tanh(h + x), NS(mesh, P("x", None)))
            return c, c.sum(axis=1)

        return j.jax.lax.scan(step, c, xs)

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("x", None)), NS(mesh, P(None, "y")), NS(mesh, P(None, "x", None))),
        out_shardings=(NS(mesh, P("x", None)), NS(mesh, P(None, "x"))),
    )
    return fn, _jargs(j, (8, 16), (16, 16), (3, 8, 16)), mesh


@jax_case(
    "tuple_outputs",
    "a function returning a dict holding a tuple of differently sharded arrays on mesh "
    "(2, 4): P('x', 'y'), P('y', None), P(None, 'x') and a replicated scalar",
)
def jcase_tuple_outputs(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))

    def f(a, b):
        return {"pair": (a + 1.0, (a @ b).T), "t": b * 2.0, "s": a.sum()}

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("x", "y")), NS(mesh, P("y", None))),
        out_shardings={
            "pair": (NS(mesh, P("x", "y")), NS(mesh, P(None, "x"))),
            "t": NS(mesh, P("y", None)),
            "s": NS(mesh, P()),
        },
    )
    return fn, _jargs(j, (8, 16), (16, 8)), mesh


@jax_case(
    "nested_calls",
    "a jitted function calling two other jitted functions (func.call) with "
    "with_sharding_constraint inside them on mesh (2, 4)",
)
def jcase_nested_calls(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))
    wsc = j.jax.lax.with_sharding_constraint

    @j.jax.jit
    def inner(a, b):
        return wsc(j.jnp.sin(a @ b), NS(mesh, P(None, "y")))

    @j.jax.jit
    def middle(a, b):
        c = inner(a, b)
        return wsc(c * inner(a, b.T @ b), NS(mesh, P("x", None)))

    def f(a, b):
        return middle(a, b) + inner(a, b)

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("x", "y")), NS(mesh, P("y", None))),
        out_shardings=NS(mesh, P("x", "y")),
    )
    return fn, _jargs(j, (8, 16), (16, 16)), mesh


@jax_case(
    "multi_axis_dims",
    "specs sharding one dim over several axes on mesh (2, 4): P(('x', 'y'), None), "
    "P(None, ('y', 'x')), P('y', 'x')",
)
def jcase_multi_axis_dims(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))

    def f(a, b):
        return a @ b, (a.T * 2.0)

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P(("x", "y"), None)), NS(mesh, P(None, ("y", "x")))),
        out_shardings=(NS(mesh, P("y", "x")), NS(mesh, P(None, ("x", "y")))),
    )
    return fn, _jargs(j, (16, 8), (8, 16)), mesh


@jax_case(
    "mesh3d",
    "mesh (2, 2, 2) ('x', 'y', 'z'): P('z', ('x', 'y')), partial replication "
    "P('x', None), P(None, 'y'), sharding constraint P('y', 'z')",
)
def jcase_mesh3d(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 2, 2), ("x", "y", "z"))

    def f(a, b, c):
        h = j.jax.lax.with_sharding_constraint(a @ b, NS(mesh, P("y", "z")))
        return h + c, h.sum(axis=0)

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("z", ("x", "y"))), NS(mesh, P("x", None)), NS(mesh, P(None, "y"))),
        out_shardings=(NS(mesh, P("z", ("x", "y"))), NS(mesh, P("x"))),
    )
    return fn, _jargs(j, (8, 8), (8, 8), (8, 8)), mesh


@jax_case("replicated_only", "all inputs and outputs replicated (P()) on mesh (2, 4)")
def jcase_replicated_only(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))
    rep = NS(mesh, P())

    def f(a, b):
        return j.jnp.tanh(a @ b), a.sum()

    fn = j.jax.jit(f, in_shardings=(rep, rep), out_shardings=(rep, rep))
    return fn, _jargs(j, (8, 8), (8, 8)), mesh


@jax_case(
    "maximal_device3",
    "a program placed whole on device 3 of 4 ({maximal device=3} on its argument and "
    "result, mhlo.num_partitions = 4): jax.jit with GSPMDSharding(devices[:4], "
    "MAXIMAL device 3); JAX's Shardy lowering cannot express it (no Shardy twin)",
    num_devices=4,
    shardy=False,
)
def jcase_maximal_device3(j):
    from jax._src.sharding_impls import GSPMDSharding
    from jaxlib import xla_client as xc

    op = xc.OpSharding()
    op.type = xc.OpSharding.Type.MAXIMAL
    op.tile_assignment_dimensions = [1]
    op.tile_assignment_devices = [3]
    placed = GSPMDSharding(j.jax.devices()[:4], op)

    def f(a, b):
        return j.jnp.tanh(a @ b) * 2.0

    fn = j.jax.jit(f, in_shardings=(placed, placed), out_shardings=placed)
    return fn, _jargs(j, (8, 16), (16, 8)), None


@jax_case(
    "annotated_result",
    "issue 24's JAX-style module: a result whose out_sharding P('x', None) on mesh "
    "(2, 4) ('x', 'y') ({devices=[2,1,4]<=[8] last_tile_dim_replicate}) is computed "
    "after a sharding constraint P('x', 'y') ({devices=[2,4]<=[8]}), and an output "
    "left unspecified",
)
def jcase_annotated_result(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))

    def f(a, b):
        h = j.jax.lax.with_sharding_constraint(j.jnp.tanh(a @ b), NS(mesh, P("x", "y")))
        return h * 2.0, h.sum(axis=1)

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("x", None)), NS(mesh, P(None, "y"))),
        out_shardings=(NS(mesh, P("x", None)), None),
    )
    return fn, _jargs(j, (8, 16), (16, 8)), mesh


@jax_case(
    "donated_update",
    "an SGD-like update jitted with donate_argnums=(0,) on mesh (2, 4) ('x', 'y'): w (16, 8) "
    "on P('x', 'y') and its gradient on P('x', None), returning the new w on P('x', 'y') "
    "(the donated w's buffer: tf.aliasing_output = 0) and a replicated loss",
)
def jcase_donated_update(j):
    P, NS = j.P, j.NS
    mesh = _jmesh(j, (2, 4), ("x", "y"))

    def f(w, g):
        new = w - 0.1 * g
        return new, (new * new).sum()

    fn = j.jax.jit(
        f,
        in_shardings=(NS(mesh, P("x", "y")), NS(mesh, P("x", None))),
        out_shardings=(NS(mesh, P("x", "y")), NS(mesh, P())),
        donate_argnums=(0,),
    )
    return fn, _jargs(j, (16, 8), (16, 8)), mesh


@jax_case(
    "donated_update_xla_dump",
    "the donated_update program run with jax_use_shardy_partitioner=False and "
    "XLA_FLAGS=--xla_dump_to: its HLO's input_output_alias gives output 0 the donated "
    "w's buffer",
    shardy=False,
    xla_dump=True,
)
def jcase_donated_update_xla_dump(j):
    return jcase_donated_update(j)


@jax_case(
    "mesh3d_xla_dump",
    "the mesh3d program (mesh (2, 2, 2), partial replication, a sharding constraint) "
    "and the shard_map_full program run with jax_use_shardy_partitioner=False and "
    "XLA_FLAGS=--xla_dump_to: every module XLA compiled, as HLO text, HloProto and the "
    "MLIR JAX handed to PJRT, as a user gets them",
    shardy=False,
    xla_dump=True,
)
def jcase_mesh3d_xla_dump(j):
    fn, args, mesh = jcase_mesh3d(j)
    fn2, args2, _ = jcase_shard_map_full(j)
    fn2(*args2)
    return fn, args, mesh


# --------------------------------------------------------------------------------------
# Child entry points
# --------------------------------------------------------------------------------------


def _jmesh_info(mesh):
    if mesh is None:
        return None
    ids = [int(d.id) for d in mesh.devices.flatten()]
    return {
        "names": list(mesh.axis_names),
        "shape": [int(s) for s in mesh.devices.shape],
        "device_ids": None if ids == list(range(len(ids))) else ids,
    }


def child_torch(case: Case, workdir: str):
    if case.meshes:  # every torch_xla Mesh the program makes, beside its dump
        from shardy_convert.torch_xla import record_meshes

        record_meshes(os.path.join(workdir, "dump.meshes.json"))
    res = case.fn()
    with open(os.path.join(workdir, "result.json"), "w") as f:
        json.dump(res, f)


def child_jax(case: Case, workdir: str):
    j = _jx()
    out = {}
    modes = (("gspmd", False), ("shardy", True)) if case.shardy else (("gspmd", False),)
    for mode, shardy in modes:
        j.jax.config.update("jax_use_shardy_partitioner", shardy)
        fn, args, mesh = case.fn(j)  # fresh functions: no lowering cache shared across modes
        text = fn.lower(*args).as_text()
        # The program must also compile and run on the CPU devices.
        fn(*args)
        out[mode] = text
    res = {"mesh": _jmesh_info(mesh), "gspmd": out["gspmd"], "shardy": out.get("shardy")}
    with open(os.path.join(workdir, "result.json"), "w") as f:
        json.dump(res, f)


# --------------------------------------------------------------------------------------
# Parent: run children, post-process, write files and manifest
# --------------------------------------------------------------------------------------

_FRAME_RE = re.compile(r"\((/[^()\s]+?)(:\d+)\)")


def _relpath(path: str) -> str:
    if os.path.abspath(path) == SELF:
        return "testdata/make_testdata.py"
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    m = re.search(r"/lib/(python3[.\d]*/.*)$", path)
    if m:
        return m.group(1)
    return os.path.basename(path)


def rewrite_dump_paths(text: str) -> str:
    """Rewrites absolute paths in the Python-frame headers (outside graphs) only."""
    out, in_graph = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("## BEGIN_GRAPH"):
            in_graph = True
        elif line.startswith("## END_GRAPH"):
            in_graph = False
        elif not in_graph:
            line = _FRAME_RE.sub(lambda m: f"({_relpath(m.group(1))}{m.group(2)})", line)
        out.append(line)
    return "".join(out)


def split_graphs(dump: str) -> list[str]:
    """The module text of each graph of a dump (without its `Graph Hash:` line)."""
    graphs = re.findall(r"## BEGIN_GRAPH\n(.*?)## END_GRAPH", dump, flags=re.S)
    return [re.split(r"^Graph Hash:", g, flags=re.M)[0].strip() + "\n" for g in graphs]


def main_results_manual(module: str) -> bool:
    """True when func @main returns a manual value: one computed from an
    @SPMDFullToShardShape result without passing an @SPMDShardToFullShape (torch_xla puts no
    sharding on results, so this follows the SSA values), or a result marked {manual}."""
    m = re.search(
        r"func\.func (?:public |private )?@main\((.*?)\)\s*->\s*(.*?)\{\n(.*)", module, flags=re.S
    )
    if not m:
        return False
    if "{manual}" in m.group(2):
        return True
    manual = set()
    for line in m.group(3).splitlines():
        line = line.strip()
        if line.startswith(("return ", "func.return ")):
            return any(v in manual for v in re.findall(r"%[\w.]+", line.split(":")[0]))
        d = re.match(r"(%[\w.]+)(?::\d+)?\s*=\s*(.*)$", line)
        if not d:
            continue
        name, rhs = d.groups()
        if "@SPMDFullToShardShape" in rhs:
            manual.add(name)
        elif "@SPMDShardToFullShape" in rhs:
            continue
        elif any(v in manual for v in re.findall(r"%[\w.]+", rhs)):
            manual.add(name)
    return False


def sharding_forms(text: str) -> list[str]:
    forms = set()
    for s in re.findall(r'mhlo\.sharding = "([^"]*)"', text):
        if "<=[" in s:
            forms.add("v2_iota")
        m = re.search(r"devices=\[[\d,]+\]([\d,]+)", s)
        if m:
            ids = [int(i) for i in m.group(1).split(",")]
            forms.add("v1_identity" if ids == sorted(ids) else "v1_non_identity")
        if "last_tile_dim_replicate" in s:
            forms.add("last_tile_dim_replicate")
        if "last_tile_dims" in s:
            forms.add("last_tile_dims")
        if "{replicated}" in s:
            forms.add("replicated")
        if "{manual}" in s:
            forms.add("manual")
        if "maximal" in s:
            forms.add("maximal")
        if s.startswith("{{"):
            forms.add("tuple")
        if s == "":
            forms.add("empty")
    for cc in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"):
        if re.search(rf"custom_call @{cc}\b", text):
            forms.add("@" + cc)
    if "sdy.manual_computation" in text:
        forms.add("sdy.manual_computation")
    if "sdy.sharding_constraint" in text:
        forms.add("sdy.sharding_constraint")
    if "func.call" in text or re.search(r"\bcall @", text):
        forms.add("call")
    return sorted(forms)


XLA_DUMP = "xla_dump"
XLA_DUMP_FLAGS = "--xla_dump_to=%s --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"


def run_child(case: Case, workdir: str, log) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XLA_", "PJRT_", "CPU_NUM_DEVICES", "TPU_", "JAX_"))
    }
    env["PYTHONHASHSEED"] = "0"
    env["TF_CPP_MIN_LOG_LEVEL"] = "1"
    flags = []
    if case.kind == "torch_xla":
        env.update({"PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": str(case.num_devices)})
        if not case.xla_dump:  # a user's plain run: XLA compiles the HLO torch_xla built
            env.update(
                {
                    "XLA_STABLEHLO_COMPILE": "1",
                    "XLA_SAVE_TENSORS_FILE": os.path.join(workdir, "dump"),
                    "XLA_SAVE_TENSORS_FMT": "stablehlo",
                }
            )
    else:
        flags.append("--xla_force_host_platform_device_count=%d" % case.num_devices)
        env["JAX_PLATFORMS"] = "cpu"
    if case.xla_dump:
        flags.append(XLA_DUMP_FLAGS % os.path.join(workdir, XLA_DUMP))
    if flags:
        env["XLA_FLAGS"] = " ".join(flags)
    cmd = [sys.executable, SELF, "--child", case.name, "--workdir", workdir]
    cwd = workdir
    if case.xla_dump:
        # XLA dumps keep the file names of JAX's stack frames (code objects' co_filename):
        # compile this file under its path relative to the repository root (Python makes a
        # script's or an imported module's path absolute).
        cwd = os.path.dirname(HERE)
        boot = (
            "p = 'testdata/make_testdata.py'; ns = {'__name__': 'make_testdata', '__file__': p}; "
            "exec(compile(open(p).read(), p, 'exec'), ns); ns['main']()"
        )
        cmd[1:2] = ["-c", boot]
    t0 = time.time()
    p = subprocess.run(
        cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    log.write("=== %s (rc=%d, %.1fs)\n%s\n" % (case.name, p.returncode, time.time() - t0, p.stdout))
    log.flush()
    if p.returncode != 0:
        tail = "\n".join(line for line in p.stdout.strip().splitlines()[-6:])
        raise RuntimeError("child exited %d:\n%s" % (p.returncode, tail))
    with open(os.path.join(workdir, "result.json")) as f:
        return json.load(f)


def _write(path: str, text: str):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def produce(case: Case, log) -> list[dict]:
    """Runs one case; writes its files; returns its manifest entries."""
    workdir = tempfile.mkdtemp(prefix=f"mktd-{case.name}-")
    try:
        res = run_child(case, workdir, log)
        entries = []
        base = {
            "num_devices": case.num_devices,
            "description": case.description,
            "mesh": res["mesh"],
            "case": case.name,
        }
        if res.get("notes"):
            base["notes"] = res["notes"]
        if case.xla_bug:
            base["xla_bug"] = case.xla_bug
        if case.kind == "torch_xla" and case.meshes:
            rel = f"torch_xla/{case.name}.meshes.json"
            shutil.copyfile(os.path.join(workdir, "dump.meshes.json"), os.path.join(HERE, rel))
            base["mesh_file"] = rel
        if case.kind == "torch_xla" and not case.xla_dump:
            dump_file = os.path.join(workdir, "dump.0")
            if not os.path.exists(dump_file):
                raise RuntimeError("torch_xla wrote no dump")
            with open(dump_file) as f:
                dump = rewrite_dump_paths(f.read())
            graphs = split_graphs(dump)
            if not graphs:
                raise RuntimeError("dump holds no graph")
            bad = [i for i, g in enumerate(graphs) if main_results_manual(g)]
            rel = f"torch_xla/{case.name}.dump"
            _write(os.path.join(HERE, rel), dump)
            e = dict(
                base,
                path=rel,
                kind="torch_xla_dump",
                graphs=len(graphs),
                forms=sharding_forms(dump),
                expect=MANUAL_ESCAPES if bad else "ok",
            )
            if bad:
                e["graph_expect"] = {str(i): MANUAL_ESCAPES for i in bad}
            entries.append(e)
            if case.mlir:
                if not res.get("mlir"):
                    raise RuntimeError("case returned no get_stablehlo text")
                rel = f"torch_xla/{case.name}.mlir"
                _write(os.path.join(HERE, rel), res["mlir"])
                entries.append(
                    dict(
                        base,
                        path=rel,
                        kind="torch_xla_mlir",
                        forms=sharding_forms(res["mlir"]),
                        expect=MANUAL_ESCAPES if main_results_manual(res["mlir"]) else "ok",
                    )
                )
            if case.hlo:
                rel = f"torch_xla/{case.name}.hlo.pb"
                with open(os.path.join(HERE, rel), "wb") as f:
                    f.write(base64.b64decode(res["hlo"]))
                entries.append(dict(base, path=rel, kind="torch_xla_hlo_proto", expect="ok"))
        elif case.kind == "jax" and not case.xla_dump:
            g_rel = f"jax/{case.name}.gspmd.mlir"
            s_rel = f"jax/{case.name}.shardy.mlir" if case.shardy else None
            _write(os.path.join(HERE, g_rel), res["gspmd"])
            twin = {"twin": s_rel} if s_rel else {}
            entries.append(
                dict(
                    base,
                    path=g_rel,
                    kind="jax_gspmd",
                    **twin,
                    forms=sharding_forms(res["gspmd"]),
                    expect="ok",
                )
            )
            if s_rel:
                _write(os.path.join(HERE, s_rel), res["shardy"])
                entries.append(
                    dict(
                        base,
                        path=s_rel,
                        kind="jax_shardy",
                        twin=g_rel,
                        forms=sharding_forms(res["shardy"]),
                        expect="ok",
                    )
                )
        if case.xla_dump:
            entries.extend(keep_xla_dump(case, os.path.join(workdir, XLA_DUMP), base))
        return entries
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# What XLA writes in a --xla_dump_to directory that the converter reads, by file name.
XLA_DUMP_INPUTS = (
    (re.compile(r"\.before_optimizations\.txt$"), "xla_hlo_text"),
    (re.compile(r"\.before_optimizations\.hlo\.pb$"), "xla_hlo_proto"),
    (re.compile(r"(^|/)module\.mlir$"), "xla_dump_mlir"),
)
# Code generation's stages (LLVM IR, objects, XLA:CPU's fused-kernel MLIR): not programs a
# user converts, and most of the directory's bytes.
_MACHINE_CODE = re.compile(r"(\.ll|\.o|_kernel_module-[\w-]+\.mlir)$")
_NUM_PARTITIONS = re.compile(r"^HloModule [^\n]*\bnum_partitions=(\d+)")


def keep_xla_dump(case: Case, src: str, base: dict) -> list[dict]:
    """Copies XLA's dump directory `src` to testdata (see the module docstring); one manifest
    entry per module XLA compiled and per form (HLO text, HloProto, MLIR)."""
    if not os.path.isdir(src):
        raise RuntimeError("XLA wrote no --xla_dump_to directory")
    rel_dir = "{}/{}.xla_dump".format("torch_xla" if case.kind == "torch_xla" else "jax", case.name)
    dst = os.path.join(HERE, rel_dir)
    shutil.rmtree(dst, ignore_errors=True)
    entries = []
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if _MACHINE_CODE.search(name):
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            if not name.endswith(".pb"):  # text: debug_options names the dump directory
                data = data.replace(src.encode(), rel_dir.encode())
            os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
            with open(os.path.join(dst, rel), "wb") as f:
                f.write(data)
            kind = next((k for pattern, k in XLA_DUMP_INPUTS if pattern.search(rel)), None)
            if kind:
                entries.append(dict(base, path=f"{rel_dir}/{rel}", kind=kind, expect="ok"))
    for e in entries:
        e["num_devices"] = _dump_num_partitions(e["path"]) or case.num_devices
    if not any(e["kind"] == "xla_hlo_text" for e in entries):
        raise RuntimeError("XLA wrote no before_optimizations HLO text")
    return entries


def _dump_num_partitions(rel: str) -> int | None:
    """The num_partitions of a dumped module, from its HLO text's header (the proto's too)."""
    text_rel = re.sub(r"\.hlo\.pb$", ".txt", rel)
    if not text_rel.endswith(".txt"):
        return None
    with open(os.path.join(HERE, text_rel)) as f:
        m = _NUM_PARTITIONS.match(f.read(4096))
    return int(m.group(1)) if m else 1


def _order(e):
    return (e["path"] is None, e["path"] or "", e.get("case", ""))


def load_manifest() -> list[dict]:
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            return json.load(f)
    return []


def save_manifest(entries: list[dict]):
    entries = sorted(entries, key=_order)
    _write(MANIFEST, json.dumps(entries, indent=1, sort_keys=False) + "\n")


# --------------------------------------------------------------------------------------
# Verification: every module parses with jaxlib's MLIR (run in a JAX child)
# --------------------------------------------------------------------------------------


def _verify_hlo_proto(path: str) -> list[str]:
    """XLA's own reader takes the proto, and it carries GSPMD shardings."""
    from jaxlib import _jax

    with open(os.path.join(HERE, path), "rb") as f:
        data = f.read()
    try:
        mlir = bytes(_jax.mlir.hlo_to_stablehlo(data))
    except Exception as ex:
        return [f"{path}: {str(ex).splitlines()[0]}"]
    return [] if b"mhlo.sharding" in mlir else [f"{path}: no mhlo.sharding"]


def _verify_xla_dump(e) -> list[str]:
    """XLA's own readers take the files of an --xla_dump_to directory."""
    from jaxlib import _jax
    from jaxlib import xla_client as xc

    path = os.path.join(HERE, e["path"])
    try:
        if e["kind"] == "xla_hlo_text":
            with open(path) as f:
                hlo = getattr(xc, "hlo", None) or xc._xla
                hlo.hlo_module_from_text(f.read())
        else:  # an HloProto: field 1 (bytes 0x0a, varint length) is the HloModuleProto
            with open(path, "rb") as f:
                data = f.read()
            length, pos, shift = 0, 1, 0
            while data[pos] & 0x80:
                length |= (data[pos] & 0x7F) << shift
                pos, shift = pos + 1, shift + 7
            length |= data[pos] << shift
            if data[0] != 0x0A:
                return ["{}: not an HloProto".format(e["path"])]
            _jax.mlir.hlo_to_stablehlo(data[pos + 1 : pos + 1 + length])
    except Exception as ex:
        return ["{}: {}".format(e["path"], str(ex).splitlines()[0])]
    return []


def child_verify():
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir

    from shardy_convert.ir.legacy_i1 import unpack_i1_hex  # torch_xla 2.9's i1 hex constants

    problems = []
    n = 0
    for e in load_manifest():
        if not e.get("path"):
            continue
        if e["kind"] == "torch_xla_hlo_proto":
            problems.extend(_verify_hlo_proto(e["path"]))
            n += 1
            continue
        if e["kind"] in ("xla_hlo_text", "xla_hlo_proto"):
            problems.extend(_verify_xla_dump(e))
            n += 1
            continue
        with open(os.path.join(HERE, e["path"])) as f:
            text = f.read()
        modules = split_graphs(text) if e["kind"] == "torch_xla_dump" else [text]
        if e["kind"] == "torch_xla_dump":
            if "## BEGIN_GRAPH" not in text or "mhlo.sharding" not in text:
                problems.append("{}: no graphs or no mhlo.sharding".format(e["path"]))
        for i, m in enumerate(modules):
            ctx = jmlir.make_ir_context()
            try:
                ir.Module.parse(unpack_i1_hex(m), context=ctx)
                n += 1
            except Exception as ex:
                problems.append("%s[graph %d]: %s" % (e["path"], i, str(ex).splitlines()[0]))
        if e["kind"] == "jax_gspmd" and ("sdy." in text or "mhlo.sharding" not in text):
            problems.append("{}: not a GSPMD lowering".format(e["path"]))
        if e["kind"] == "jax_shardy" and "sdy.mesh" not in text:
            problems.append("{}: no sdy.mesh".format(e["path"]))
    for root, _, files in os.walk(HERE):
        for fn in files:
            dumped = ".xla_dump" in root  # every file XLA wrote, text or binary
            if fn == os.path.basename(SELF) or not (
                dumped or fn.endswith((".dump", ".mlir", ".json"))
            ):
                continue
            with open(os.path.join(root, fn), "rb") as f:
                text = f.read().decode("latin-1")
            # (spelled in pieces so that this file itself stays free of them)
            for pat in ("/work/", "/root/", "/tmp/", "/home/", "site-packages", "dist-packages"):
                if pat in text:
                    problems.append(f"{fn}: holds a machine path ({pat})")
    print("parsed %d modules" % n)
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)


def verify(log) -> bool:
    env = dict(
        os.environ,
        XLA_FLAGS="--xla_force_host_platform_device_count=8",
        JAX_PLATFORMS="cpu",
        TF_CPP_MIN_LOG_LEVEL="1",
    )
    p = subprocess.run(
        [sys.executable, SELF, "--child-verify"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log.write("=== verify (rc=%d)\n%s\n" % (p.returncode, p.stdout))
    print(p.stdout.strip())
    return p.returncode == 0


# --------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="cases to (re)generate")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("--verify-only", action="store_true")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument(
        "--log",
        default=os.path.join(tempfile.gettempdir(), "make_testdata.log"),
        help="where children's output goes (default: %(default)s)",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-verify", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.child:
        case = CASES[a.child]
        (child_torch if case.kind == "torch_xla" else child_jax)(case, a.workdir)
        return
    if a.child_verify:
        child_verify()
        return
    if a.list:
        for c in CASES.values():
            print("%-26s %-9s %2d devices  %s" % (c.name, c.kind, c.num_devices, c.description))
        return

    with open(a.log, "a") as log:
        if not a.verify_only:
            names = a.only or list(CASES)
            unknown = [n for n in names if n not in CASES]
            if unknown:
                ap.error("unknown case(s): {} (see --list)".format(", ".join(unknown)))
            entries = [e for e in load_manifest() if e.get("case") not in names]
            failed = []
            for name in names:
                t0 = time.time()
                try:
                    new = produce(CASES[name], log)
                except Exception as ex:
                    failed.append(name)
                    print("%-26s FAILED: %s" % (name, ex))
                    continue
                entries.extend(new)
                print(
                    "%-26s ok  %5.1fs  %s"
                    % (
                        name,
                        time.time() - t0,
                        ", ".join(
                            "%s (%d B)"
                            % (e["path"], os.path.getsize(os.path.join(HERE, e["path"])))
                            for e in new
                        ),
                    )
                )
            save_manifest(entries)
            if failed:
                print("failed: {} (log: {})".format(", ".join(failed), a.log))
                sys.exit(1)
        if not a.no_verify and not verify(log):
            sys.exit(1)


if __name__ == "__main__":
    main()

"""torch_xla SPMD programs run by the e2e tests, each on torch_xla's built-in CPU runtime and
through the wrapper on xla-cpu-pjrt. Each returns named numpy arrays to compare, plus facts.

Runs in a child process with torch_xla set up by run_program.py (PJRT_DEVICE is per process).
With EAGER set, the same program runs in plain PyTorch on the CPU, unsharded: the ground
truth where XLA's own CPU runtime is wrong (custom device orders).
"""

from __future__ import annotations

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

import small_models

# Not an iota transpose: no V2 string can express this order (pytorch/xla Mesh(device_ids)).
CUSTOM_ORDER = [5, 2, 7, 0, 3, 6, 1, 4]


EAGER = False


def _device():
    return torch.device("cpu") if EAGER else torch_xla.device()


def _mesh(devices, shape, names):
    return None if EAGER else xs.Mesh(np.array(devices), shape, names)


def _shard(tensor, mesh, spec) -> None:
    if not EAGER:
        xs.mark_sharding(tensor, mesh, spec)


def _sync() -> None:
    if not EAGER:
        torch_xla.sync()


def _numpy(tensors: dict) -> dict:
    return {k: v.detach().cpu().numpy() for k, v in tensors.items()}


def _seeded(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape) * 7 + 1))


def train_2x4() -> dict:
    """An MLP's training loop (forward, backward, SGD with momentum) on a (2, 4) mesh: batch
    on "data", the weights column- then row-parallel on "model"; 4 steps."""
    torch.manual_seed(0)
    mesh = _mesh(range(8), (2, 4), ("data", "model"))
    model = small_models.tp_mlp(16, 32, mesh, dev=_device(), shard_bias=False, mark=_shard)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = _seeded(8, 16).to(_device()), _seeded(8, 16).to(_device())
    _shard(x, mesh, ("data", None))
    losses = []
    for _ in range(4):
        loss = small_models.mse_step(model, optimizer, x, y)
        _sync()
        losses.append(loss.detach())
    out = {f"param.{n}": p for n, p in model.named_parameters()}
    out.update({f"loss.{i}": v for i, v in enumerate(losses)})
    return _numpy(out)


def custom_order_tp() -> dict:
    """Megatron tensor parallelism on a custom device order: an embedding (the gather XLA's
    partitioner gets wrong on explicit device lists), a column- and a row-parallel linear, a
    training step fed back into the next one (3 steps)."""
    torch.manual_seed(0)
    mesh = _mesh(CUSTOM_ORDER, (2, 4), ("data", "model"))
    embed = torch.nn.Embedding(128, 64).to(_device())
    up = torch.nn.Linear(64, 128, bias=False).to(_device())
    down = torch.nn.Linear(128, 64, bias=False).to(_device())
    _shard(embed.weight, mesh, ("model", None))
    _shard(up.weight, mesh, ("model", None))
    _shard(down.weight, mesh, (None, "model"))
    params = [*embed.parameters(), *up.parameters(), *down.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.1)
    ids = (torch.arange(64) * 37 % 128).to(_device())
    _shard(ids, mesh, ("data",))
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        h = embed(ids)
        _shard(h, mesh, ("data", "model"))
        h = down(torch.nn.functional.silu(up(h)))
        loss = (h.float() ** 2).mean()
        loss.backward()
        optimizer.step()
        _sync()
        losses.append(loss.detach())
    out = {"embed": embed.weight, "up": up.weight, "down": down.weight}
    out.update({f"loss.{i}": v for i, v in enumerate(losses)})
    return _numpy(out)


def llama_tp_custom_order() -> dict:
    """HF transformers LlamaForCausalLM (tiny config, random init) with Megatron tensor
    parallelism on a custom device order, 3 SGD steps (parameters fed back each step)."""
    return llama_tp(CUSTOM_ORDER)


def llama_tp_setup(device_ids):
    """(model, ids): HF transformers LlamaForCausalLM (tiny config, random init, seed 0) with
    Megatron tensor parallelism on `Mesh(device_ids, (2, 4), ("data", "model"))`, and a batch
    of ids on "data"."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(small_models.llama_config()).to(_device())
    mesh = _mesh(device_ids, (2, 4), ("data", "model"))
    generator = torch.Generator().manual_seed(1)
    rules = small_models.LLAMA_MEGATRON
    (ids,) = small_models.lm_inputs(
        model, mesh, rules, 4, 16, dev=_device(), generator=generator, mark=_shard
    )
    return model, ids


def llama_tp(device_ids) -> dict:
    """The Llama TP loop on `Mesh(device_ids, (2, 4), ("data", "model"))`."""
    model, ids = llama_tp_setup(device_ids)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = small_models.lm_forward(model, ids).loss
        loss.backward()
        optimizer.step()
        _sync()
        losses.append(loss.detach())
    out = {f"param.{n}": p for n, p in model.named_parameters()}
    out.update({f"loss.{i}": v for i, v in enumerate(losses)})
    return _numpy(out)


def manual_region() -> dict:
    """A manual region (enable/disable_manual_sharding) straight on an input and one on an
    intermediate, partially replicated, on a custom device order; the result reused."""
    mesh = xs.Mesh(np.array(CUSTOM_ORDER), (2, 4), ("data", "model"))
    x = _seeded(8, 16).to(_device())
    w = _seeded(16, 8).to(_device())
    xs.mark_sharding(w, mesh, ("model", None))
    local = xs.enable_manual_sharding(x, ("data", "model"), mesh=mesh).global_tensor
    local = torch.sin(torch.cumsum(local, dim=1)) * 3.0
    x2 = xs.disable_manual_sharding(local, ("data", "model"), x.shape, mesh=mesh).global_tensor
    y = x2 * 2.0 + 1.0
    local = xs.enable_manual_sharding(y, (None, "model"), mesh=mesh).global_tensor
    local = local - local.mean(dim=0, keepdim=True)
    z = xs.disable_manual_sharding(local, (None, "model"), y.shape, mesh=mesh).global_tensor
    del local  # a live manual tensor would become a graph output (no Shardy form)
    out = (z @ w).relu()
    xs.mark_sharding(out, mesh, (None, "data"))
    torch_xla.sync()
    again = torch.cat([out, out], dim=1) * 2.0 + z  # the outputs fed back as inputs
    torch_xla.sync()
    return _numpy({"out": out, "z": z, "again": again})


def mesh_3d_16() -> dict:
    """16 devices on a (2, 2, 4) mesh: a two-layer network sharded on all three axes, one
    training step."""
    torch.manual_seed(0)
    mesh = xs.Mesh(np.arange(16), (2, 2, 4), ("data", "fsdp", "model"))
    w1 = _seeded(32, 64).to(_device()).requires_grad_()
    w2 = _seeded(64, 32).to(_device()).requires_grad_()
    xs.mark_sharding(w1, mesh, ("fsdp", "model"))
    xs.mark_sharding(w2, mesh, ("model", "fsdp"))
    x = _seeded(16, 32).to(_device())
    xs.mark_sharding(x, mesh, (("data", "fsdp"), None))
    loss = (torch.tanh(x @ w1) @ w2).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w1_new = w1 - 0.1 * w1.grad
        w2_new = w2 - 0.1 * w2.grad
    torch_xla.sync()
    return _numpy({"loss": loss, "w1": w1_new, "w2": w2_new})


def compiled_model() -> dict:
    """torch.compile(backend="openxla") on a model with a sharded weight, called 6 times with
    fresh inputs: retraces are counted (pytorch/xla#9755)."""
    import torch_xla._dynamo.dynamo_bridge as bridge

    traces = []
    original = bridge.extract_graph_helper

    def counting(*args, **kwargs):
        traces.append(1)
        return original(*args, **kwargs)

    bridge.extract_graph_helper = counting
    torch.manual_seed(0)
    mesh = xs.Mesh(np.arange(8), (8,), ("data",))
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU()).to(_device())
    xs.mark_sharding(model[0].weight, mesh, ("data", None))
    compiled = torch.compile(model, backend="openxla")
    outputs = {}
    for step in range(6):  # fresh, unannotated inputs: their spec reads ""
        x = (_seeded(8, 16) + step).to(_device())
        outputs[f"out.{step}"] = compiled(x)
    result = _numpy(outputs)
    result["traces"] = np.array(len(traces))
    return result


def manual_escape() -> dict:
    """A graph with no Shardy form: a manual (local-shape) tensor alive at sync becomes an
    output of main."""
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    x = _seeded(8, 16).to(_device())
    xs.mark_sharding(x, mesh, ("data", "model"))
    local = xs.enable_manual_sharding(x + 1.0, ("data", "model"), mesh=mesh).global_tensor
    local = local * 2.0
    z = xs.disable_manual_sharding(local, ("data", "model"), x.shape, mesh=mesh).global_tensor
    out = z.sum(dim=1)
    torch_xla.sync()
    return _numpy({"out": out})


def sharded_matmul() -> dict:
    """`a @ b + 1` with `a` on a (2, 4) mesh: one small program (the device-type tests)."""
    mesh = _mesh(range(8), (2, 4), ("x", "y"))
    a = torch.arange(64, dtype=torch.float32).reshape(8, 8).to(_device())
    b = torch.eye(8).flip(0).to(_device())
    _shard(a, mesh, ("x", "y"))
    out = a @ b + 1
    _sync()
    return _numpy({"product": out})


PROGRAMS = {
    "train_2x4": (train_2x4, 8),
    "sharded_matmul": (sharded_matmul, 8),
    "custom_order_tp": (custom_order_tp, 8),
    "llama_tp_custom_order": (llama_tp_custom_order, 8),
    "manual_region": (manual_region, 8),
    "mesh_3d_16": (mesh_3d_16, 16),
    "compiled_model": (compiled_model, 8),
    "manual_escape": (manual_escape, 8),
}


def setup_spmd() -> None:
    xr.use_spmd()

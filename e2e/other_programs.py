"""torch_xla programs nobody tuned the converter for: other models, meshes, device orders and
program features than e2e/programs.py, run the same way (run_program.py, one process per
runtime). Each returns named numpy arrays; names starting with "reduced." are float
reductions over sharded dims (compared within reassociation), the rest are compared bit-exact.

Found with them (see the tests): torch_xla's built-in CPU runtime rejects a while loop whose
carry is sharded (its HLO verifier: "Inconsistent while sharding"), and computes a custom order
on 16 devices wrong; through the wrapper both agree with plain PyTorch.
"""

from __future__ import annotations

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs

import small_models
from e2e import programs
from e2e.programs import _device, _mesh, _numpy, _seeded, _shard, _sync

# A permutation of 16 devices that no V2 (iota) string expresses.
ORDER_16 = [8, 5, 10, 2, 12, 0, 1, 14, 13, 7, 11, 3, 6, 9, 4, 15]


def t5_on_a_3d_mesh() -> dict:
    """HF T5 (encoder-decoder, tiny, random init) on a (2, 2, 2) mesh: the batch on two axes
    at once, attention/MLP weights on ("model", "fsdp") and back, labels with ignore_index
    (-100); 2 SGD steps fed back."""
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    config = T5Config(
        vocab_size=64,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=1,
        num_heads=4,
        dropout_rate=0.0,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    model = T5ForConditionalGeneration(config).to(_device())
    mesh = xs.Mesh(np.arange(8), (2, 2, 2), ("data", "fsdp", "model"))
    rules = [
        (("q.weight", "k.weight", "v.weight", "wi.weight"), ("model", "fsdp")),
        (("o.weight", "wo.weight"), ("fsdp", "model")),
        (("shared.weight",), ("fsdp", None)),
    ]
    small_models.shard_params(model, mesh, rules)
    generator = torch.Generator().manual_seed(4)
    source = torch.randint(1, 64, (8, 12), generator=generator).to(_device())
    target = torch.randint(1, 64, (8, 6), generator=generator)
    target[:, -1] = -100
    target = target.to(_device())
    xs.mark_sharding(source, mesh, (("data", "fsdp"), None))
    xs.mark_sharding(target, mesh, (("data", "fsdp"), None))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    out = {}
    for step in range(2):
        optimizer.zero_grad()
        loss = model(input_ids=source, labels=target).loss
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        out[f"reduced.loss.{step}"] = loss.detach()
    out.update({f"reduced.{n}": p for n, p in model.named_parameters()})
    return _numpy(out)


def features_on_a_3d_mesh() -> dict:
    """Program features on a (2, 2, 2) mesh with tuple dims and partial replication, 2 steps
    fed back: int/bool/int8/uint8 tensors, argmax, one_hot, cumsum, masks, in-place add_ and
    index_add_, gather/scatter_add/topk/sort, seeded RNG (rand, dropout, bernoulli), bf16/f16/
    f64 matmuls, scalar outputs."""
    import torch_xla.core.xla_model as xm

    xm.set_rng_state(42)
    mesh = xs.Mesh(np.arange(8), (2, 2, 2), ("a", "b", "c"))
    x = _seeded(16, 8).to(_device())
    xs.mark_sharding(x, mesh, (("a", "b"), None))
    counts = torch.zeros(16, dtype=torch.int64).to(_device())
    xs.mark_sharding(counts, mesh, (("a", "b", "c"),))
    acc = torch.zeros(8, 8).to(_device())
    xs.mark_sharding(acc, mesh, ("c", "a"))
    table = torch.zeros(16, 8).to(_device())
    xs.mark_sharding(table, mesh, ("b", None))
    index = (torch.arange(12) * 5 % 16).to(_device())
    out = {}
    for step in range(2):
        positive = x > 0.0
        counts += positive.sum(dim=1)
        top = x.argmax(dim=1)
        acc.add_(torch.nn.functional.one_hot(top, 8).to(torch.float32).T @ x)
        table.index_add_(0, index, x.index_select(0, index) * (step + 1))
        gathered = torch.gather(x, 1, (torch.arange(64).view(16, 4) % 8).to(_device()))
        scattered = (
            torch.zeros(16, 8)
            .to(_device())
            .scatter_add(1, (torch.arange(64).view(16, 4) * 3 % 8).to(_device()), gathered)
        )
        values, indices = torch.topk(x, 3, dim=1)
        noise = torch.rand(16, 8, device=_device())
        xs.mark_sharding(noise, mesh, ("c", "b"))
        dropped = torch.nn.functional.dropout(x, p=0.5, training=True)
        coins = torch.bernoulli(torch.full((16, 8), 0.3, device=_device()))
        out.update(
            {
                f"top.{step}": top,
                f"cumsum.{step}": torch.cumsum(positive.to(torch.int32), dim=1),
                f"any.{step}": positive.any(),
                f"reduced.total.{step}": x.masked_fill(~positive, -1.0).sum(),
                f"scattered.{step}": scattered,
                f"topk.{step}": values,
                f"topk_indices.{step}": indices,
                f"sorted.{step}": torch.sort(x[:, 0]).values,
                f"noise.{step}": noise,
                f"dropped.{step}": dropped,
                f"coins.{step}": coins,
            }
        )
        x = torch.where(positive, x * 0.5, x + 1.0)
        torch_xla.sync()
    small = (x * 10).to(torch.int8)
    xs.mark_sharding(small, mesh, (None, "c"))
    out.update({"counts": counts, "reduced.acc": acc, "table": table, "x": x})
    out.update({"int8": small * 2 + 1, "uint8": (x.abs() * 20).to(torch.uint8) // 3})
    w = _seeded(8, 4).to(_device())
    xs.mark_sharding(w, mesh, ("b", None))
    for name, dtype in (("f16", torch.float16), ("f64", torch.float64), ("bf16", torch.bfloat16)):
        out[f"reduced.{name}"] = (x.to(dtype) @ w.to(dtype)).to(torch.float32)
    torch_xla.sync()
    return _numpy(out)


def custom_order_16() -> dict:
    """16 devices on a (4, 4) mesh in a custom order: an embedding with its table on "model",
    a linear whose contracting dim is sharded, one sharded on both axes; 2 steps fed back."""
    torch.manual_seed(0)
    mesh = _mesh(ORDER_16, (4, 4), ("data", "model"))
    embed = torch.nn.Embedding(64, 32).to(_device())
    up = torch.nn.Linear(32, 64, bias=False).to(_device())
    down = torch.nn.Linear(64, 32, bias=False).to(_device())
    _shard(embed.weight, mesh, ("model", None))
    _shard(up.weight, mesh, (None, "model"))
    _shard(down.weight, mesh, ("data", "model"))
    ids = (torch.arange(32) * 13 % 64).view(8, 4).to(_device())
    _shard(ids, mesh, ("data", None))
    params = [*embed.parameters(), *up.parameters(), *down.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.1)
    out = {}
    for step in range(2):
        optimizer.zero_grad()
        loss = (down(torch.tanh(up(embed(ids)))) ** 2).mean()
        loss.backward()
        optimizer.step()
        _sync()
        out[f"reduced.loss.{step}"] = loss.detach()
    out.update(
        {"reduced.embed": embed.weight, "reduced.up": up.weight, "reduced.down": down.weight}
    )
    return _numpy(out)


def while_loop_on_4() -> dict:
    """A 4-device client with a (2, 2) mesh: an MLP trained 2 steps with Adam (batch and
    hidden dims sharded), then an XLA while loop (torch's while_loop) carrying a sharded
    tensor."""
    import torch_xla.experimental.fori_loop  # noqa: F401  (torch_xla's while_loop lowering)
    from torch._higher_order_ops.while_loop import while_loop

    torch.manual_seed(0)
    mesh = _mesh(range(4), (2, 2), ("data", "model"))
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.SiLU(), torch.nn.Linear(16, 4)).to(
        _device()
    )
    _shard(model[0].weight, mesh, ("model", "data"))
    _shard(model[2].weight, mesh, (None, "model"))
    x = _seeded(8, 8).to(_device())
    _shard(x, mesh, ("data", "model"))
    y = _seeded(8, 4).to(_device())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    out = {}
    for step in range(2):
        optimizer.zero_grad()
        loss = torch.nn.functional.smooth_l1_loss(model(x), y)
        loss.backward()
        optimizer.step()
        _sync()
        out[f"reduced.loss.{step}"] = loss.detach()
    out.update({f"reduced.{n}": p for n, p in model.named_parameters()})
    count = torch.tensor(5, dtype=torch.int32, device=_device())
    _, looped = while_loop(
        lambda i, v: i > 0, lambda i, v: (i - 1, torch.add(torch.sin(v), v)), (count, x)
    )
    _sync()
    out["looped"] = looped
    return _numpy(out)


def fsdp_v2() -> dict:
    """FSDPv2 (torch_xla's SpmdFullyShardedDataParallel) on an ("fsdp", "model") = (8, 1) mesh
    set as the global mesh: a 3-layer MLP, 2 Adam steps."""
    from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
        SpmdFullyShardedDataParallel,
    )

    torch.manual_seed(0)
    mesh = xs.Mesh(np.arange(8), (8, 1), ("fsdp", "model"))
    xs.set_global_mesh(mesh)
    layers = [torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32), torch.nn.ReLU()]
    model = SpmdFullyShardedDataParallel(
        torch.nn.Sequential(*layers, torch.nn.Linear(32, 8)).to(_device())
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x = _seeded(16, 16).to(_device())
    xs.mark_sharding(x, mesh, ("fsdp", None))
    y = _seeded(16, 8).to(_device())
    out = {}
    for step in range(2):
        loss = small_models.mse_step(model, optimizer, x, y)
        torch_xla.sync()
        out[f"reduced.loss.{step}"] = loss.detach()
    out.update({f"reduced.{n}": p for n, p in model.named_parameters()})
    return _numpy(out)


def uneven() -> dict:
    """12 rows sharded 8 ways: GSPMD pads them, 2 rows a device (pad-uneven gives the converted
    program that padded layout)."""
    mesh = xs.Mesh(np.arange(8), (8,), ("x",))
    x = _seeded(12, 4).to(_device())
    xs.mark_sharding(x, mesh, ("x", None))
    y = (x * 2.0).sum(dim=1)
    torch_xla.sync()
    return _numpy({"y": y})


PROGRAMS = {
    "t5_on_a_3d_mesh": (t5_on_a_3d_mesh, 8),
    "features_on_a_3d_mesh": (features_on_a_3d_mesh, 8),
    "custom_order_16": (custom_order_16, 16),
    "while_loop_on_4": (while_loop_on_4, 4),
    "fsdp_v2": (fsdp_v2, 8),
    "uneven": (uneven, 8),
}
assert not set(PROGRAMS) & set(programs.PROGRAMS)

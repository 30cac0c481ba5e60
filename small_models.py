"""The small torch models and training steps that the test data (testdata/make_testdata.py),
the benchmark inputs (bench/make_inputs.py) and the end-to-end programs (e2e/) run under
torch_xla SPMD: one copy of each, so "the tiny Llama", "its Megatron sharding" or "the
tensor-parallel MLP" is the same model wherever it is trained.

torch, torch_xla and transformers are imported when a function is called: the parents of
make_testdata.py and make_inputs.py, and make_testdata.py's JAX children, never import them.
The builders take the device and the marking function: `xs.mark_sharding` unless given, e2e's
`_shard` where its programs also run eagerly (a mark that does nothing there).

Imported by its name from the repository root: e2e's children run there, make_testdata.py and
make_inputs.py put the root on sys.path.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------
# torch_xla
# --------------------------------------------------------------------------------------


def spmd():
    """Imports torch_xla, enters SPMD mode and seeds torch and numpy with 0; a namespace of
    the modules (np, torch, torch_xla, xm, xr, xs) and the XLA device (dev)."""
    import types

    import numpy as np
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr

    xr.use_spmd()
    torch.manual_seed(0)
    np.random.seed(0)
    return types.SimpleNamespace(
        np=np, torch=torch, torch_xla=torch_xla, xm=xm, xr=xr, xs=xs, dev=torch_xla.device()
    )


def _marker(mark):
    if mark is not None:
        return mark
    import torch_xla.distributed.spmd as xs

    return xs.mark_sharding


def shard_params(model, mesh, rules, mark=None) -> None:
    """Marks every parameter whose name ends in one of a rule's suffixes with that rule's
    partition spec (the first rule that matches; the others stay unannotated). `rules`:
    [(suffixes, spec), ...]."""
    mark = _marker(mark)
    for name, p in model.named_parameters():
        spec = next((spec for suffixes, spec in rules if name.endswith(suffixes)), None)
        if spec is not None:
            mark(p, mesh, spec)


def grads_stablehlo(loss, model) -> str:
    """One training step lowered: `loss.backward()`, then xm.get_stablehlo of the loss and
    every gradient (of the parameters that got one)."""
    import torch_xla.core.xla_model as xm

    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return xm.get_stablehlo([loss, *grads])


# --------------------------------------------------------------------------------------
# Hugging Face causal/masked LMs (random init from a config, no downloads)
# --------------------------------------------------------------------------------------

# The tiny Llama: hidden 32, 1 layer, 4 heads, 2 KV heads, vocabulary 128.
TINY_LLAMA = {
    "vocab_size": 128,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
}

# Megatron tensor parallelism of HF Llama on mesh axis "model": q/k/v/gate/up and lm_head
# column-parallel, o/down row-parallel, the token embedding on its hidden dim.
LLAMA_MEGATRON = [
    (
        (
            "q_proj.weight",
            "k_proj.weight",
            "v_proj.weight",
            "gate_proj.weight",
            "up_proj.weight",
            "lm_head.weight",
        ),
        ("model", None),
    ),
    (("o_proj.weight", "down_proj.weight", "embed_tokens.weight"), (None, "model")),
]

# The same for HF GPT-2, whose Conv1D weights are (in, out): c_attn/c_fc column-parallel, c_proj
# row-parallel, the token embedding on its hidden dim.
GPT2_MEGATRON = [
    (("c_attn.weight", "c_fc.weight", "wte.weight"), (None, "model")),
    (("c_proj.weight",), ("model", None)),
]


def llama_config(**fields):
    """A transformers LlamaConfig: the tiny Llama (TINY_LLAMA), `fields` set over it."""
    from transformers import LlamaConfig

    return LlamaConfig(**{**TINY_LLAMA, **fields})


def lm_inputs(
    model, mesh, rules, batch, length, *, dev, vocab=128, mask=False, generator=None, mark=None
):
    """The HF LMs' common setup: the parameters of `model` (already on `dev`) sharded by
    `rules`, a (batch, length) i64 batch of ids drawn from `generator` (torch's default one
    unless given), with `mask` an all-ones i64 attention mask, each on mesh axis "data". The
    inputs, [ids] or [ids, mask]."""
    import torch

    mark = _marker(mark)
    shard_params(model, mesh, rules, mark)
    ids = torch.randint(0, vocab, (batch, length), generator=generator).to(dev)
    inputs = [ids]
    if mask:
        inputs.append(torch.ones(batch, length, dtype=torch.long).to(dev))
    for x in inputs:
        mark(x, mesh, ("data", None))
    return inputs


def lm_forward(model, ids, mask=None):
    """The LM's output on `ids` as its own labels (`.loss`). Its logits stay alive as long
    as it does: a tensor alive at torch_xla.sync() is an output of the graph synced."""
    return model(input_ids=ids, attention_mask=mask, labels=ids)


# --------------------------------------------------------------------------------------
# Small networks
# --------------------------------------------------------------------------------------


def tp_mlp(d, hidden, mesh, *, dev, shard_bias=True, mark=None):
    """Linear(d, hidden) -> GELU -> Linear(hidden, d) on `dev`, tensor-parallel on mesh axis
    "model": the first weight (and with shard_bias its bias) column-parallel, the second
    weight row-parallel."""
    import torch

    mark = _marker(mark)
    model = torch.nn.Sequential(
        torch.nn.Linear(d, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, d)
    ).to(dev)
    mark(model[0].weight, mesh, ("model", None))
    if shard_bias:
        mark(model[0].bias, mesh, ("model",))
    mark(model[2].weight, mesh, (None, "model"))
    return model


def mse_step(model, optimizer, x, y):
    """One training step on the MSE of model(x) against y: zero_grad, forward, backward,
    optimizer step; the loss."""
    import torch

    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def pre_ln_block(mesh, H, NH, MLP, B, S, *, affine=True, bias=True, out_spec=None):
    """The class of a pre-LN transformer block on mesh ('fsdp', 'tp') for (B, S, H) inputs:
    NH heads, an MLP of width MLP (GELU); the q/k/v heads annotated ('fsdp', 'tp', None,
    None), the block's output `out_spec` where given. `affine`: LayerNorms with weights and
    biases; `bias`: the MLP's Linears with biases (the attention's have none)."""
    import torch
    import torch_xla.distributed.spmd as xs

    nn, F = torch.nn, torch.nn.functional
    HD = H // NH

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(H, elementwise_affine=affine)
            self.wq = nn.Linear(H, H, bias=False)
            self.wk = nn.Linear(H, H, bias=False)
            self.wv = nn.Linear(H, H, bias=False)
            self.wo = nn.Linear(H, H, bias=False)
            self.ln2 = nn.LayerNorm(H, elementwise_affine=affine)
            self.up = nn.Linear(H, MLP, bias=bias)
            self.down = nn.Linear(MLP, H, bias=bias)

        def forward(self, x):
            h = self.ln1(x)

            def heads(p):
                p = p.view(B, S, NH, HD).transpose(1, 2)  # (B, NH, S, HD)
                xs.mark_sharding(p, mesh, ("fsdp", "tp", None, None))
                return p

            q, k, v = heads(self.wq(h)), heads(self.wk(h)), heads(self.wv(h))
            att = (q @ k.transpose(-2, -1)) / (HD**0.5)
            mask = torch.ones(S, S, device=x.device).tril() == 0
            att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
            o = (att @ v).transpose(1, 2).reshape(B, S, H)
            x = x + self.wo(o)
            x = x + self.down(F.gelu(self.up(self.ln2(x))))
            if out_spec is not None:
                xs.mark_sharding(x, mesh, out_spec)
            return x

    return Block


def shard_block(block, mesh, mark=None) -> None:
    """FSDP x TP weights of a pre_ln_block: q/k/v/up column-parallel ('tp', 'fsdp'), o/down
    row-parallel ('fsdp', 'tp'), the up projection's bias (where it has one) on 'tp'."""
    mark = _marker(mark)
    for lin in (block.wq, block.wk, block.wv, block.up):  # column parallel
        mark(lin.weight, mesh, ("tp", "fsdp"))
    for lin in (block.wo, block.down):  # row parallel
        mark(lin.weight, mesh, ("fsdp", "tp"))
    if block.up.bias is not None:
        mark(block.up.bias, mesh, ("tp",))

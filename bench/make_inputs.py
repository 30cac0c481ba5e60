#!/usr/bin/env python3
"""Make the benchmark inputs with REAL torch_xla 2.9 runs (never written by hand).

    .venv-torch/bin/python bench/make_inputs.py            # what is missing
    .venv-torch/bin/python bench/make_inputs.py --force    # everything again
    .venv-torch/bin/python bench/make_inputs.py --only transformer_L96 small

Each input is traced in a child process of its own (torch_xla fixes the device count per
process): `PJRT_DEVICE=CPU CPU_NUM_DEVICES=N`, `xr.use_spmd()`, the program traced lazily and
lowered with `xm.get_stablehlo([outputs])` -- nothing is compiled or run, so even 256 virtual
CPU devices cost only ~1 GB of RSS (PJRT's CPU client creates the devices, nothing else).
The small dump is the exception: torch_xla only writes `XLA_SAVE_TENSORS_FILE` when a graph
is executed, so that one runs (8 devices, one small block).

Outputs in bench/out/ (git-ignored):
  transformer_L{8,32,96}.mlir  pre-LN transformer, L layers, forward + loss.backward(),
                               [loss] + gradients as outputs, mesh (8, 8) ('fsdp', 'tp')
  forward256_permuted.mlir     48-layer forward on 256 devices, Mesh(device_ids=<a fixed random
                               permutation>, (16, 16), ('fsdp', 'tp'))
  big.mlir                     the 64-device transformer with BIG_LAYERS layers (>= 10 MB)
  small.dump                   a torch_xla dump (XLA_STABLEHLO_COMPILE=1 XLA_SAVE_TENSORS_FILE
                               XLA_SAVE_TENSORS_FMT=stablehlo) of one block on 8 devices
  cost_llama.mlir              real-size models for the program-cost section (bench_cost.py):
  cost_gpt2.mlir               one training step each, [loss] + gradients, lowered and never
  cost_resnet18.mlir           run, 8 devices: HF Llama 2048 wide (TP x DP), HF GPT-2 1024
                               wide (2-D mesh), torchvision ResNet-18 224x224 batch 32
                               (spatial sharding)
  llama_L32.mlir               a whole 32-layer HF Llama training step (LlamaConfig: 32 layers,
                               32 heads, 8 KV heads, vocab 32000; 1024 wide so its weights fit
                               a shared machine: the text, ~1 MB, does not depend on the
                               width), Megatron TP x DP on 8 devices, lowered and never run:
                               the whole-model graph the plugin hook is timed on
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
SELF = Path(__file__).resolve()
ROOT = SELF.parent.parent
if str(ROOT) not in sys.path:  # for small_models (last: it shadows no installed package)
    sys.path.append(str(ROOT))

import small_models  # noqa: E402  (the model code shared with testdata/ and e2e/)

BIG_LAYERS = 520  # ~20.8 kB per layer -> ~10.8 MB

# name -> (kind, devices, options)
INPUTS = {
    "transformer_L8": ("transformer", 64, {"layers": 8}),
    "transformer_L32": ("transformer", 64, {"layers": 32}),
    "transformer_L96": ("transformer", 64, {"layers": 96}),
    "forward256_permuted": ("forward256", 256, {"layers": 48}),
    "big": ("transformer", 64, {"layers": BIG_LAYERS}),
    "small": ("small_dump", 8, {}),
    "cost_llama": ("cost_llama", 8, {}),
    "cost_gpt2": ("cost_gpt2", 8, {}),
    "cost_resnet18": ("cost_resnet18", 8, {}),
    "llama_L32": ("llama_L32", 8, {}),
}
COST_INPUTS = ["cost_llama", "cost_gpt2", "cost_resnet18"]


def path_of(name: str) -> Path:
    return OUT / (name + (".dump" if INPUTS[name][0] == "small_dump" else ".mlir"))


# --------------------------------------------------------------------------------------
# Children (inside the torch_xla process)
# --------------------------------------------------------------------------------------


def _model(t, mesh, layers, H, NH, MLP, B, S):
    """A pre-LN transformer (LayerNorm without affine, Linear without bias: ~145 lines and
    ~21 kB of StableHLO per layer with backward on 64 devices, so 96 layers is about the
    1.85 MB / 13.5k-line module of issue 4) whose weights are FSDP x TP sharded, with
    annotations on the q/k/v heads and on each block's output."""
    Block = small_models.pre_ln_block(
        mesh, H, NH, MLP, B, S, affine=False, bias=False, out_spec=("fsdp", None, None)
    )
    model = t.torch.nn.Sequential(*[Block() for _ in range(layers)]).to(t.dev)
    for block in model:
        small_models.shard_block(block, mesh)
    return model


def child_transformer(layers: int) -> str:
    """Forward + backward on 64 devices, mesh (8, 8) ('fsdp', 'tp'), gradients as outputs."""
    t = small_models.spmd()
    mesh = t.xs.Mesh(t.np.arange(64), (8, 8), ("fsdp", "tp"))
    B, S = 8, 16
    model = _model(t, mesh, layers, H=64, NH=8, MLP=128, B=B, S=S)
    x = t.torch.randn(B, S, 64).to(t.dev)
    t.xs.mark_sharding(x, mesh, ("fsdp", None, None))
    return small_models.grads_stablehlo(model(x).pow(2).mean(), model)


def child_forward256(layers: int) -> str:
    """Forward only on 256 devices in a custom (permuted, non-iota) device order."""
    t = small_models.spmd()
    perm = t.np.random.RandomState(256).permutation(256)
    mesh = t.xs.Mesh(perm, (16, 16), ("fsdp", "tp"))
    B, S = 16, 16
    model = _model(t, mesh, layers, H=128, NH=16, MLP=256, B=B, S=S)
    x = t.torch.randn(B, S, 128).to(t.dev)
    t.xs.mark_sharding(x, mesh, ("fsdp", None, None))
    with t.torch.no_grad():
        out = model(x)
    return t.xm.get_stablehlo([out])


def child_small_dump() -> None:
    """One block, forward + backward, executed so torch_xla writes its dump file."""
    t = small_models.spmd()
    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("fsdp", "tp"))
    model = _model(t, mesh, 1, H=32, NH=4, MLP=64, B=4, S=8)
    x = t.torch.randn(4, 8, 32).to(t.dev)
    t.xs.mark_sharding(x, mesh, ("fsdp", None, None))
    loss = model(x).pow(2).mean()
    loss.backward()
    t.torch_xla.sync()
    loss.cpu()


def _lm_step(t, model, rules, batch, length, vocab) -> str:
    """An HF causal LM's step on mesh (2, 4) ('data', 'model'), lowered and never run:
    parameters sharded by `rules` (name suffixes -> partition spec), a (batch, length) batch
    of ids on 'data'; [loss] + gradients as outputs."""
    mesh = t.xs.Mesh(t.np.arange(8), (2, 4), ("data", "model"))
    model = model.to(t.dev)
    (ids,) = small_models.lm_inputs(model, mesh, rules, batch, length, dev=t.dev, vocab=vocab)
    return small_models.grads_stablehlo(small_models.lm_forward(model, ids).loss, model)


def _llama_step(hidden, intermediate, layers, kv_heads, batch, length) -> str:
    """An HF Llama step (vocabulary 32000, 32 heads), Megatron TP on 'model' x DP."""
    t = small_models.spmd()
    from transformers import LlamaForCausalLM

    config = small_models.llama_config(
        vocab_size=32000,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=32,
        num_key_value_heads=kv_heads,
        max_position_embeddings=512,
    )
    model = LlamaForCausalLM(config)
    return _lm_step(t, model, small_models.LLAMA_MEGATRON, batch, length, 32000)


def child_cost_llama() -> str:
    """HF Llama, 2048 wide (TinyLlama's widths, 2 layers), Megatron TP on 'model' x DP."""
    return _llama_step(2048, 5632, layers=2, kv_heads=4, batch=8, length=256)


def child_llama_L32() -> str:
    """A whole 32-layer HF Llama step: the whole-model graph of the hook's target."""
    return _llama_step(1024, 2816, layers=32, kv_heads=8, batch=4, length=128)


def child_cost_gpt2() -> str:
    """HF GPT-2, 1024 wide (GPT-2 medium's width, 2 layers), on the 2-D mesh as hf_gpt2_2d."""
    t = small_models.spmd()
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=50257,
        n_positions=1024,
        n_embd=1024,
        n_layer=2,
        n_head=16,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return _lm_step(t, GPT2LMHeadModel(config), small_models.GPT2_MEGATRON, 8, 512, 50257)


def child_cost_resnet18() -> str:
    """torchvision ResNet-18, images (32, 3, 224, 224) sharded spatially on mesh (2, 2, 2)
    ('data', 'h', 'w'), as resnet18_spatial at a real size."""
    t = small_models.spmd()
    torch, xs = t.torch, t.xs
    import torchvision

    mesh = xs.Mesh(t.np.arange(8), (2, 2, 2), ("data", "h", "w"))
    model = torchvision.models.resnet18(num_classes=1000).to(t.dev)
    x = torch.randn(32, 3, 224, 224).to(t.dev)
    y = torch.randint(0, 1000, (32,)).to(t.dev)
    xs.mark_sharding(x, mesh, ("data", None, "h", "w"))
    xs.mark_sharding(y, mesh, ("data",))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    return small_models.grads_stablehlo(loss, model)


CHILDREN = {
    "transformer": child_transformer,
    "forward256": child_forward256,
    "cost_llama": child_cost_llama,
    "cost_gpt2": child_cost_gpt2,
    "cost_resnet18": child_cost_resnet18,
    "llama_L32": child_llama_L32,
}


def child(name: str, result: Path) -> None:
    kind, _, opts = INPUTS[name]
    if kind == "small_dump":
        child_small_dump()
        return
    text = CHILDREN[kind](**opts)
    result.write_text(text)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------


def produce(name: str) -> dict:
    kind, devices, _ = INPUTS[name]
    work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XLA_", "PJRT_", "CPU_NUM_DEVICES", "TPU_", "JAX_"))
    }
    env.update(PJRT_DEVICE="CPU", CPU_NUM_DEVICES=str(devices), TF_CPP_MIN_LOG_LEVEL="2")
    if kind == "small_dump":
        env.update(
            XLA_STABLEHLO_COMPILE="1",
            XLA_SAVE_TENSORS_FILE=str(work / "dump"),
            XLA_SAVE_TENSORS_FMT="stablehlo",
        )
    cmd = [sys.executable, str(SELF), "--child", name, "--result", str(work / "result.mlir")]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            cmd, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        seconds = time.perf_counter() - t0
        if p.returncode != 0:
            tail = "\n".join(p.stdout.strip().splitlines()[-8:])
            raise RuntimeError(f"{name}: torch_xla child exited {p.returncode}:\n{tail}")
        made = work / ("dump.0" if kind == "small_dump" else "result.mlir")
        if not made.exists() or made.stat().st_size == 0:
            raise RuntimeError(f"{name}: torch_xla wrote nothing ({made.name})")
        OUT.mkdir(parents=True, exist_ok=True)
        target = path_of(name)
        tmp = target.with_suffix(target.suffix + ".tmp")
        shutil.copyfile(made, tmp)
        os.replace(tmp, target)  # atomic: an interrupted run leaves no half file behind
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"name": name, "seconds": seconds, "bytes": target.stat().st_size}


def make(names, force: bool = False, log=print) -> list[dict]:
    """Makes the missing inputs (all with force); returns what was made, with timings."""
    made = []
    for name in names:
        target = path_of(name)
        if target.exists() and not force:
            log(f"  {target.name:<26} cached ({target.stat().st_size / 1e6:.2f} MB)")
            continue
        r = produce(name)
        log(f"  {target.name:<26} made in {r['seconds']:6.1f} s ({r['bytes'] / 1e6:.2f} MB)")
        made.append(r)
    return made


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="regenerate even when the file exists")
    ap.add_argument("--only", nargs="+", choices=sorted(INPUTS), help="only these inputs")
    ap.add_argument("--child", choices=sorted(INPUTS), help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.result)
        return 0
    try:
        import torch_xla  # noqa: F401  (fail early, with a clear message)
    except ImportError:
        print(
            f"error: {sys.executable} has no torch_xla; run with the torch venv "
            "(.venv-torch/bin/python bench/make_inputs.py)",
            file=sys.stderr,
        )
        return 2
    print(f"bench inputs in {OUT} (torch_xla via {sys.executable}):")
    t0 = time.perf_counter()
    make(args.only or list(INPUTS), force=args.force)
    print(f"  total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

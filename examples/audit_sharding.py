"""Audit the sharding contract of a small HF model by name: one AdamW step of a tiny Llama
(transformers, random init) with Megatron tensor parallelism on 8 CPU devices, then a report
of what each tensor was marked and what the compiled step gave it.

    .venv-torch/bin/python examples/audit_sharding.py gspmd   # torch_xla's built-in runtime
    .venv-torch/bin/python examples/audit_sharding.py shardy  # through use_plugin (Shardy)
        [--policy examples/sharding.toml] [--json report.json] [--plugin PLUGIN.so]

It prints the report, writes it as JSON with --json (`shardy-convert diff a.json b.json`
compares two runs by name), and ends with `report.check()`: with --policy, the exit status
is 1 when the program breaks the policy (the CI recipe of docs/audit.md).
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's C++ info lines


def start(partitioner: str, plugin: str | None, stablehlo: bool = False) -> None:
    """Before any XLA work: the recorder (GSPMD) or the Shardy plugin (it records too),
    torch_xla handing it StableHLO instead of HLO protos with `stablehlo`."""
    from shardy_convert import torch_xla as sc

    if partitioner == "gspmd":
        os.environ["PJRT_DEVICE"] = "CPU"
        os.environ["CPU_NUM_DEVICES"] = "8"
        sc.record()  # every Mesh and mark_sharding from here on
        return
    plugin = plugin or sc.cpu_plugin_path()  # OpenXLA's CPU plugin (xla-cpu-pjrt)
    sc.use_plugin(plugin, create_options={"cpu_device_count": 8}, stablehlo_compile=stablehlo)


def train_one_step():
    """The program under audit: (model, optimizer) after one AdamW step."""
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr
    from transformers import LlamaConfig, LlamaForCausalLM

    xr.use_spmd()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    model = LlamaForCausalLM(config).to(torch_xla.device())
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    column = ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "lm_head")
    row = ("o_proj", "down_proj", "embed_tokens")
    for name, p in model.named_parameters():  # Megatron: column- then row-parallel
        if name.endswith(tuple(f"{c}.weight" for c in column)):
            xs.mark_sharding(p, mesh, ("model", None))
        elif name.endswith(tuple(f"{r}.weight" for r in row)):
            xs.mark_sharding(p, mesh, (None, "model"))
    ids = torch.randint(0, 128, (4, 16), generator=torch.Generator().manual_seed(1))
    ids = ids.to(torch_xla.device())
    xs.mark_sharding(ids, mesh, ("data", None))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    return model, optimizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("partitioner", choices=["gspmd", "shardy"])
    parser.add_argument("--policy", help="a TOML sharding policy (docs/audit.md)")
    parser.add_argument("--json", help="also write the report here, as JSON")
    parser.add_argument("--plugin", help="the PJRT plugin for shardy (default: xla-cpu-pjrt)")
    parser.add_argument(
        "--stablehlo", action="store_true", help="shardy: torch_xla hands StableHLO, not HLO"
    )
    args = parser.parse_args()
    start(args.partitioner, args.plugin, args.stablehlo)
    from shardy_convert import torch_xla as sc

    model, optimizer = train_one_step()
    report = sc.audit(model, optimizer, policy=args.policy)
    print(report, end="")
    if args.json:
        with open(args.json, "w") as f:
            f.write(report.to_json())
    try:
        report.check()
    except sc.ShardingContractError as e:
        print(e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

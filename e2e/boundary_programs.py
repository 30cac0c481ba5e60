"""torch_xla programs whose compiled boundary decides how many programs torch_xla compiles:
an output's sharding is the next step's input sharding, so where the partitioner picks another
sharding for an output torch_xla leaves open, the next step is another program (issue 17).
Run like e2e/programs.py (run_program.py, one process per runtime)."""

from __future__ import annotations

import numpy as np
import torch
import torch_xla
import torch_xla.debug.metrics as met

import small_models
from e2e.programs import CUSTOM_ORDER, _numpy, llama_tp_setup


def _spec(tensor) -> str:
    return torch_xla._XLAC._get_xla_sharding_spec(tensor)


def _compiles() -> int:
    """Programs torch_xla compiled so far (its UncachedCompile counter: a graph it has not
    compiled before, by hash of the graph and its input shardings)."""
    return int(met.counter_value("UncachedCompile") or 0)


def _compile_calls() -> int:
    data = met.metric_data("CompileTime")
    return 0 if data is None else int(data[0])


def llama_adamw_tp() -> dict:
    """HF transformers LlamaForCausalLM (tiny config, random init), Megatron tensor
    parallelism on the custom device order, AdamW, 3 steps: after each step the number of
    programs torch_xla compiled so far and the sharding spec of every parameter and optimizer
    state (what the next step's graph takes as input shardings)."""
    model, ids = llama_tp_setup(CUSTOM_ORDER)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    names = {p: n for n, p in model.named_parameters()}
    out, compiles, calls = {}, [], []
    for step in range(3):
        optimizer.zero_grad()
        loss = small_models.lm_forward(model, ids).loss
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        compiles.append(_compiles())
        calls.append(_compile_calls())
        specs = {f"param.{n}": _spec(p) for p, n in names.items()}
        for p, state in optimizer.state.items():
            for key in ("exp_avg", "exp_avg_sq"):
                specs[f"state.{names[p]}.{key}"] = _spec(state[key])
        out[f"specs.{step}"] = np.array([f"{k}={v}" for k, v in sorted(specs.items())])
        out[f"loss.{step}"] = loss.detach().cpu().numpy()
    out["compiles"] = np.array(compiles)
    out["compile_calls"] = np.array(calls)
    out["report"] = np.array(met.metrics_report())
    out["cached_compiles"] = np.array(int(met.counter_value("CachedCompile") or 0))
    out.update(_numpy({f"param.{n}": p for n, p in model.named_parameters()}))
    return out


PROGRAMS = {"llama_adamw_tp": (llama_adamw_tp, 8)}

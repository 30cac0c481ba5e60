"""Stock torch_xla 2.9 on a Shardy-only PJRT plugin, through shardy-convert's wrapper.

    .venv-torch/bin/python examples/torch_xla_on_shardy_plugin.py [PLUGIN.so]

PLUGIN defaults to OpenXLA's CPU plugin from PyPI (xla-cpu-pjrt). A small MLP trains on a
(2, 4) mesh; every program torch_xla compiles reaches the plugin as Shardy, compiled with
use_shardy_partitioner=true.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's C++ info lines

from shardy_convert.torch_xla import cpu_plugin_path, use_plugin

plugin = sys.argv[1] if len(sys.argv) > 1 else cpu_plugin_path()
handle = use_plugin(plugin, create_options={"cpu_device_count": 8})

import numpy as np  # noqa: E402  (after use_plugin: before any XLA work)
import torch  # noqa: E402
import torch_xla  # noqa: E402
import torch_xla.distributed.spmd as xs  # noqa: E402
import torch_xla.runtime as xr  # noqa: E402

xr.use_spmd()
mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
model = model.to(torch_xla.device())
xs.mark_sharding(model[0].weight, mesh, ("model", None))
xs.mark_sharding(model[2].weight, mesh, (None, "model"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 16).to(torch_xla.device())
xs.mark_sharding(x, mesh, ("data", None))
for step in range(3):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    print(f"step {step}: loss {loss.item():.6f}")
print(f"devices: {xr.global_runtime_device_count()} ({handle.name} = wrapper around {plugin})")
print(f"shardy-convert: {handle.counters}")

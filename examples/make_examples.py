"""Writes the inputs the docs' examples run on, each from a real torch_xla 2.9 run on 8
virtual CPU devices (`xm.get_stablehlo()` of the graph): `make examples` (venv .venv-torch).

    examples/mlp.mlir     a two-layer MLP, Mesh([3, 6, 0, 5, 1, 7, 2, 4], (2, 4)): V1 lists in
                          a custom device order
    examples/dot.mlir     a dot on Mesh([6, 2, 1, 7, 3, 0, 5, 4], (2, 4), ("data", "model"))
                          whose contracting dim is sharded on "data": jaxlib 0.10.2's CPU
                          partitioner computes it wrongly (`check` says so)
    examples/uneven.mlir  a 1x128 tensor split 8 ways on dim 0: GSPMD pads it, Shardy would
                          compile another program (`convert` warns)

Each case runs in a process of its own (PJRT_DEVICE is per process); a second run writes the
same files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEVICES = 8


def _spmd():
    import torch_xla.runtime as xr

    xr.use_spmd()


def mlp() -> str:
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.spmd as xs

    _spmd()
    mesh = xs.Mesh(np.array([3, 6, 0, 5, 1, 7, 2, 4]), (2, 4), ("data", "model"))
    torch.manual_seed(0)
    device = torch_xla.device()
    x = torch.randn(8, 16).to(device)
    w1, w2 = torch.randn(16, 32).to(device), torch.randn(32, 16).to(device)
    xs.mark_sharding(x, mesh, ("data", None))
    xs.mark_sharding(w1, mesh, (None, "model"))
    xs.mark_sharding(w2, mesh, ("model", None))
    y = torch.relu(x @ w1) @ w2
    return xm.get_stablehlo([y])


def dot() -> str:
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.spmd as xs

    _spmd()
    mesh = xs.Mesh(np.array([6, 2, 1, 7, 3, 0, 5, 4]), (2, 4), ("data", "model"))
    device = torch_xla.device()
    a = torch.arange(32, dtype=torch.float32).reshape(4, 8).div(31).to(device)
    b = torch.arange(128, dtype=torch.float32).reshape(8, 16).div(127).to(device)
    xs.mark_sharding(a, mesh, (None, "data"))
    xs.mark_sharding(b, mesh, ("data", "model"))
    out = torch.tanh(a @ b)
    xs.mark_sharding(out, mesh, (None, "model"))
    return xm.get_stablehlo([out])


def uneven() -> str:
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.spmd as xs

    _spmd()
    mesh = xs.Mesh(np.arange(DEVICES), (DEVICES,), ("x",))
    t = torch.ones(1, 128).to(torch_xla.device())
    xs.mark_sharding(t, mesh, ("x", None))
    return xm.get_stablehlo([t + t])


CASES = {"mlp": mlp, "dot": dot, "uneven": uneven}


def main() -> None:
    if len(sys.argv) == 2:  # one case, in this process
        (HERE / f"{sys.argv[1]}.mlir").write_text(CASES[sys.argv[1]]())
        return
    env = dict(os.environ, PJRT_DEVICE="CPU", CPU_NUM_DEVICES=str(DEVICES))
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    for name in CASES:
        subprocess.run([sys.executable, __file__, name], env=env, check=True)
        print(f"wrote examples/{name}.mlir")


if __name__ == "__main__":
    main()

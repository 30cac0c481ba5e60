"""XLA's `CompileOptions`, built in one place (as JAX's `compiler.get_compile_options` is for
jax): a program of N partitions, one replica, on devices 0..N-1, partitioned by GSPMD or by
Shardy.

The propagation flags are vectors, one entry per parameter (per result), or one entry for all:
XLA aborts when a vector's length is neither 1 nor the count. torch_xla (and jax.jit for
unspecified out_shardings) compiles with `allow_spmd_sharding_propagation_to_output = [True]`:
an output the module leaves unannotated gets the partitioner's propagated sharding, not
replicated. A PJRT plugin's own options (a serialized CompileOptionsProto, as torch_xla hands
it) replace the flags when given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import compat

Flags = bool | tuple[bool, ...] | list[bool]


def compile_options(
    num_devices: int,
    *,
    shardy: bool,
    propagate_to_parameters: Flags | None = None,
    propagate_to_output: Flags | None = True,
    proto: bytes | None = None,
    optimize: bool = True,
    device_ids: tuple[int, ...] | None = None,
) -> Any:
    """jaxlib's `CompileOptions` for `num_devices` partitions on devices 0..N-1, with the
    chosen partitioner.

    propagate_to_parameters, propagate_to_output: XLA's
        `allow_spmd_sharding_propagation_to_parameters` / `_to_output`, a bool for every
        value or one per value; None leaves XLA's default (off). Ignored with `proto`.
    proto: a serialized CompileOptionsProto to start from (a plugin's: torch_xla's flags);
        the partition count, the partitioner and the device assignment are set over it.
    optimize: False compiles with LLVM at optimization level 0 and without its expensive
        passes: sharding propagation and the partitioner run on HLO before LLVM sees it, so
        the compiled shardings are the same at about half the CPU time (for a compile whose
        program is never run).
    device_ids: the device each partition runs on (the device assignment), default 0..N-1."""
    options = compat.new_compile_options(proto)
    build = options.executable_build_options
    if not proto:
        if propagate_to_parameters is not None:
            build.allow_spmd_sharding_propagation_to_parameters = _vector(propagate_to_parameters)
        if propagate_to_output is not None:
            build.allow_spmd_sharding_propagation_to_output = _vector(propagate_to_output)
    build.num_partitions = num_devices
    build.num_replicas = 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    ids = np.arange(num_devices) if device_ids is None else np.array(device_ids)
    build.device_assignment = compat.device_assignment(ids.reshape(1, num_devices))
    if not optimize:
        build.debug_options.xla_backend_optimization_level = 0
        build.debug_options.xla_llvm_disable_expensive_passes = True
    return options


def _vector(flags: Flags) -> list[bool]:
    return [flags] if isinstance(flags, bool) else [bool(f) for f in flags]

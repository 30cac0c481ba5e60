"""Running a compiled program on given inputs: each input placed on the program's devices by
its parameter sharding, each output assembled from its shards into one global array.

Through public JAX API (`jax.device_put`, `jax.make_array_from_single_device_arrays`) on the
pool client's devices, with 64-bit types enabled for this call only (`compat.x64`): torch_xla
graphs take f64 scalars, which jax would otherwise silently make f32.
"""

from __future__ import annotations

import numpy as np

from ..cpp_stderr import cpp_stderr
from . import compat
from .compiler import Executable


def execute(
    compiled: Executable, inputs: list[np.ndarray], output_shapes: list[tuple[int, ...]]
) -> list[np.ndarray]:
    """The program's outputs on `inputs` (one array per parameter), as numpy arrays of
    `output_shapes`."""
    import jax

    parameters = compiled.parameter_shardings(len(inputs))
    outputs = compiled.output_shardings(len(output_shapes))
    devices = compiled.devices
    with compat.x64(), cpp_stderr():  # XLA's logging stays off the terminal
        args = [
            jax.device_put(value, compat.gspmd_sharding(devices, sharding))
            for value, sharding in zip(inputs, parameters)
        ]
        results = compiled.executable.execute_sharded(args)
        shards = results.disassemble_into_single_device_arrays()
        values = []
        for arrays, sharding, shape in zip(shards, outputs, output_shapes):
            array = jax.make_array_from_single_device_arrays(
                shape, compat.gspmd_sharding(devices, sharding), arrays
            )
            values.append(np.asarray(array))
    return values


def shard_indices(
    compiled: Executable, output: int, shape: tuple[int, ...]
) -> list[tuple[int, tuple]]:
    """(device id, the index of the part of output `output` it holds: one slice per dim) for
    each device of the program, in its order: which devices hold an element of the output."""
    sharding = compiled.output_shardings(output + 1)[output]
    placed = compat.gspmd_sharding(compiled.devices, sharding)
    found = placed.devices_indices_map(tuple(shape))
    return [(device.id, found[device]) for device in compiled.devices if device in found]

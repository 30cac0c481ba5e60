"""A program compiled for `check`: compiled on the CPU client of N devices (xla/) with the
partitioner of its side, @main's shapes beside it, run on given inputs.

The compile, the clients and the run are xla/'s: one CPU client per device count, made for
this process (no `XLA_FLAGS`, no jax backend involved), XLA's C++ logging (the device list,
the GSPMD deprecation notice, its warnings) kept off the terminal and in `log`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...errors import ShardyConvertError
from ...ir.debug_locations import parseable
from ...ir.legacy_i1 import i1_hex_for_parser
from ...xla import compiler
from ...xla import execute as xla_execute
from ...xla.options import compile_options
from .cost import REMATERIALIZATION, Cost, program_cost
from .signature import Signature, main_signature


@dataclass
class Compiled:
    """One compiled program (`program`: xla/'s), the shardings XLA chose (one per parameter
    and output of @main, replicated ones for a one-device program) and @main's shapes; the
    program as handed to XLA (`source`) and whether Shardy was asked for (`shardy`)."""

    program: compiler.Executable
    signature: Signature
    source: str | bytes = ""
    shardy: bool = False

    @cached_property
    def partitioner(self):
        """Which partitioner XLA really used (partitioner.py: a `PartitionerUsed`)."""
        from .partitioner import partitioner_used

        return partitioner_used(self.source, shardy=self.shardy, log=self.log)

    @cached_property
    def parameters(self) -> list:
        return self.program.parameter_shardings(len(self.signature.args))

    @cached_property
    def outputs(self) -> list:
        return self.program.output_shardings(len(self.signature.results))

    @property
    def executable(self):
        return self.program.executable

    @property
    def devices(self) -> tuple:
        return self.program.devices

    @property
    def log(self) -> str:
        """What XLA wrote to file descriptor 2 while compiling it."""
        return self.program.log

    @cached_property
    def cost(self) -> Cost:
        """Its collectives, memory, FLOPs and rematerializations (see `cost`; unknown where
        this XLA does not write its rematerialization warning where we read it)."""
        return program_cost(self.program, self.log if rematerializations_logged() else None)


# A reshard XLA's partitioner can only do by replicating the tensor first (measured on jaxlib
# 0.10.2: one "Involuntary full rematerialization" warning, GSPMD and Shardy alike).
PROBE_DEVICES = 4
_REMAT_PROBE = (
    'func.func @main(%arg0: tensor<6x8x8xf32> {mhlo.sharding = "{devices=[1,1,4]<=[4]}"}) -> '
    "tensor<6x8x8xf32> {\n"
    '  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,1,1,2]<=[4] '
    'last_tile_dim_replicate}"} : (tensor<6x8x8xf32>) -> tensor<6x8x8xf32>\n'
    "  return %0 : tensor<6x8x8xf32>\n}\n"
)


@functools.cache
def rematerializations_logged() -> bool:
    """Whether this XLA writes its involuntary-rematerialization warning to file descriptor 2
    (jaxlib 0.10.2 does, at WARNING level, which `TF_CPP_MIN_LOG_LEVEL=2` hides; 0.7.1 does
    not): found by compiling a program that needs one."""
    probe = compile_module(_REMAT_PROBE, PROBE_DEVICES, shardy=False)
    return REMATERIALIZATION in probe.log


def compile_module(text: str | bytes, n: int, *, shardy: bool) -> Compiled:
    """`compile_program` of a module's text (its signature read from it)."""
    return compile_program(text, main_signature(text), n, shardy=shardy)


def compile_program(text: str | bytes, signature: Signature, n: int, *, shardy: bool) -> Compiled:
    """Compiles `text`, whose @main is `signature`, on the CPU client of `n` devices with `n`
    partitions and the chosen partitioner. Propagation to an output is allowed only where the
    module leaves that result unannotated (one flag per result, as `jax.jit` sets them and as
    torch_xla's dumps, whose results carry none, get all True): with True for an annotated
    result GSPMD would replace its annotation, Shardy would keep it. A module that names its
    device order
    (`Signature.device_order`: a program placed whole on device k is one partition on k)
    compiles on those devices of the `n`."""
    if isinstance(text, str):  # XLA's parser is jaxlib's MLIR too (legacy_i1, debug_locations)
        text = parseable(i1_hex_for_parser(text))
    order = signature.device_order
    options = compile_options(
        len(order or range(n)),
        shardy=shardy,
        propagate_to_output=signature.propagate_to_output(),
        device_ids=order,
    )
    try:
        program = compiler.compile_program(text, n, options, device_ids=order)
    except compiler.CompileError as e:  # report which side failed
        side = "Shardy result" if shardy else "GSPMD original"
        raise ShardyConvertError(f"the {side} does not compile: {e.reason}") from None
    return Compiled(program, signature, text, shardy)


def execute(compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Runs the program: each input placed by its parameter sharding, each output assembled
    from its shards into one global array. Raises NotRun where this client cannot run it."""
    shapes = [shape for shape, _ in compiled.signature.results]
    try:
        return xla_execute.execute(compiled.program, inputs, shapes)
    except Exception as e:  # XlaRuntimeError, or jax refusing an element type
        raise NotRun(f"the CPU client does not run it: {str(e).strip().splitlines()[0]}") from None


class NotRun(ShardyConvertError):
    """A compiled program whose values this client cannot compute (an element type it does
    not run, a runtime error): the graph is compared by placement and cost only."""

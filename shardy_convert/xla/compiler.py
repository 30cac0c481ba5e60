"""Compiling a program on the pool's CPU client (the only caller of XLA's compile), and what
the compiled program says: the parameter and output shardings XLA chose, its optimized HLO,
its memory and its cost.

The program is StableHLO text or bytecode, already accepted by the converter: XLA aborts the
process on some malformed shardings. Text goes to XLA's parser (jaxlib's MLIR) as it is: the
caller puts `i1` constants in the layout that parser reads (ir/legacy_i1.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..cpp_stderr import cpp_stderr
from ..errors import ShardyConvertError
from . import clients, compat


class CompileError(ShardyConvertError):
    """XLA refused to compile a program; `reason` is XLA's own message, whole."""

    def __init__(self, reason: str, error_type: str):
        super().__init__(reason or error_type)
        self.reason = reason
        self.error_type = error_type

    @property
    def first_line(self) -> str:
        """XLA's first line, or the error's type where XLA said nothing."""
        text = self.reason.strip()
        return text.splitlines()[0] if text else self.error_type


@dataclass
class Executable:
    """One compiled program on `devices`: XLA's executable, the shardings XLA chose (XLA's
    `HloSharding`s: `str` is the GSPMD string, `is_replicated()`; None for a one-device
    program, which has none), what XLA wrote to file descriptor 2 while compiling it (`log`,
    its warnings among it) and how long the compile took."""

    executable: Any
    devices: tuple
    parameters: list | None
    outputs: list | None
    log: str = ""
    seconds: float = 0.0

    def parameter_shardings(self, count: int) -> list:
        """One sharding per parameter; replicated ones where XLA has none (one device)."""
        return _filled(self.parameters, count)

    def output_shardings(self, count: int) -> list:
        """One sharding per output; replicated ones where XLA has none (one device)."""
        return _filled(self.outputs, count)

    def optimized_hlo(self) -> str | None:
        """The optimized, partitioned HLO text of the executable's (first) module; None
        where the executable keeps none."""
        modules = getattr(self.executable, "hlo_modules", None)
        if modules is None:
            return None
        try:
            return modules()[0].to_string()
        except Exception:  # an executable that keeps no HLO (a deserialized one)
            return None

    def memory(self) -> dict[str, int]:
        """XLA's compiled memory stats in bytes, by name (`temp`, `argument`, `output`,
        `alias`); the ones this backend does not give are left out."""
        stats_of = getattr(self.executable, "get_compiled_memory_stats", None)
        if stats_of is None:
            return {}
        try:
            stats = stats_of()
        except Exception:  # XlaRuntimeError: UNIMPLEMENTED on backends without the stats
            return {}
        names = ("temp", "argument", "output", "alias")
        values = {n: getattr(stats, f"{n}_size_in_bytes", None) for n in names}
        return {n: int(v) for n, v in values.items() if v is not None}

    def flops(self) -> float | None:
        """XLA's cost analysis' FLOPs; None where this backend gives none."""
        analyse = getattr(self.executable, "cost_analysis", None)
        if analyse is None:
            return None
        try:
            analysis = analyse()
        except Exception:  # XlaRuntimeError: UNIMPLEMENTED
            return None
        if isinstance(analysis, list | tuple):  # older jaxlibs: one dict per module
            analysis = analysis[0] if analysis else {}
        if not isinstance(analysis, dict):
            return None
        return float(analysis.get("flops", 0.0))  # XLA leaves out the measures that are 0


def compile_program(
    program: str | bytes, num_devices: int, options: Any, device_ids: tuple[int, ...] | None = None
) -> Executable:
    """Compiles `program` (StableHLO text or bytecode) with `options` (xla/options.py) on the
    pool's client of `num_devices` devices: all of them, or those of `device_ids` (the
    options' device assignment: a program placed whole on device k is one partition on k).
    XLA's logging (the device list, GSPMD's deprecation notice, its warnings) is kept off the
    terminal, in `log`. Raises CompileError with XLA's reason when XLA refuses it."""
    client = clients.cpu_client(num_devices)
    devices = clients.cpu_devices(num_devices)
    if device_ids is not None:
        devices = tuple(devices[d] for d in device_ids)
    start = time.perf_counter()
    try:
        with cpp_stderr() as log:
            executable = client.compile_and_load(program, compat.device_list(devices), options)
    except Exception as e:  # XlaRuntimeError
        raise CompileError(str(e), type(e).__name__) from None
    seconds = time.perf_counter() - start
    parameters = _shardings(executable.get_parameter_shardings())
    outputs = _shardings(executable.get_output_shardings())
    return Executable(executable, devices, parameters, outputs, "".join(log), seconds)


def _shardings(protos: list | None) -> list | None:
    if protos is None:
        return None
    return [compat.sharding_from_proto(p) for p in protos]


def _filled(shardings: list | None, count: int) -> list:
    if shardings is None:
        return [compat.replicated_sharding()] * count
    return list(shardings)

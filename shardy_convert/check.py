"""Proof by compilation: the GSPMD original and the Shardy result compile to the same program.

Both are compiled on jaxlib's CPU PJRT client with N devices (GSPMD partitioner for the
original, Shardy for the result); parameter shardings, output shardings (where the original
annotates them) and the results on random inputs must be equal. The CPU client needs
`XLA_FLAGS=--xla_force_host_platform_device_count=N` before jax starts: `ensure_devices(N)`
sets it, and fails if jax already started with fewer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import ShardyConvertError

_DEVICE_FLAG = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


def ensure_devices(n: int) -> None:
    """Makes the CPU client have at least `n` devices (only possible before jax starts)."""
    flags = os.environ.get("XLA_FLAGS", "")
    m = _DEVICE_FLAG.search(flags)
    if m and int(m.group(1)) >= n:
        return
    import sys

    if "jax._src.xla_bridge" in sys.modules:
        from jax._src import xla_bridge

        if xla_bridge.backends_are_initialized() and len(_backend().devices()) < n:
            raise ShardyConvertError(f"the CPU client already started with fewer than {n} devices")
    flags = _DEVICE_FLAG.sub("", flags)
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def _backend():
    from jax._src import xla_bridge

    return xla_bridge.get_backend("cpu")


@dataclass
class Compiled:
    """One compiled program: its executable and the shardings XLA chose."""

    executable: object
    parameters: list
    outputs: list
    devices: list
    signature: Signature


def compile_module(text: str | bytes, n: int, *, shardy: bool) -> Compiled:
    """Compiles on the CPU client with `n` partitions and the chosen partitioner."""
    from jax._src.lib import xla_client as xc

    from .legacy_i1 import unpack_i1_hex

    ensure_devices(n)
    if isinstance(text, str):  # XLA's parser is jaxlib's MLIR too (see legacy_i1)
        text = unpack_i1_hex(text)
    backend = _backend()
    devices = backend.devices()[:n]
    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_partitions = n
    build.num_replicas = 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    try:
        exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
    except Exception as e:  # XlaRuntimeError: report which side failed
        side = "Shardy result" if shardy else "GSPMD original"
        raise ShardyConvertError(f"the {side} does not compile: {e}") from None
    shardings = [xc.HloSharding.from_proto(p) for p in exe.get_parameter_shardings()]
    outputs = [xc.HloSharding.from_proto(p) for p in exe.get_output_shardings()]
    return Compiled(exe, shardings, outputs, devices, main_signature(text))


@dataclass
class Report:
    """What `compare` found; `ok` when nothing differs."""

    num_devices: int
    parameters: int = 0
    outputs: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def __str__(self) -> str:
        head = f"{self.parameters} parameters, {self.outputs} outputs on {self.num_devices} devices"
        if self.ok:
            return f"same program: {head}"
        return f"DIFFERENT: {head}\n" + "\n".join(f"  {d}" for d in self.differences)


def compare(original: str | bytes, converted: str | bytes, n: int, *, seed: int = 0) -> Report:
    """Compiles both sides and compares shardings and values on random inputs."""
    gspmd = compile_module(original, n, shardy=False)
    shardy = compile_module(converted, n, shardy=True)
    report = Report(n, len(gspmd.parameters), len(gspmd.outputs))
    _compare_shardings("parameter", gspmd.parameters, shardy.parameters, report)
    # Only outputs the original annotates: the others are whatever each partitioner chose.
    _compare_shardings(
        "output", gspmd.outputs, shardy.outputs, report, gspmd.signature.annotated_results
    )
    if report.ok:
        _compare_values(gspmd, shardy, report, seed)
    return report


def _compare_shardings(
    what: str, a: list, b: list, report: Report, only: frozenset[int] | None = None
) -> None:
    """Differences between two sharding lists; `only` limits them to those indices."""
    if len(a) != len(b):
        report.differences.append(f"{len(a)} {what}s in the original, {len(b)} in the result")
        return
    for k, (x, y) in enumerate(zip(a, b)):
        if only is not None and k not in only:
            continue
        if x != y and not (x.is_replicated() and y.is_replicated()):
            report.differences.append(f"{what} {k}: GSPMD {x!r} vs Shardy {y!r}")


def _compare_values(gspmd: Compiled, shardy: Compiled, report: Report, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = [_random(rng, shape, dtype) for shape, dtype in gspmd.signature.args]
    want = _run(gspmd, inputs)
    got = _run(shardy, inputs)
    for k, (w, g) in enumerate(zip(want, got)):
        if w.shape != g.shape or not np.allclose(w, g, rtol=1e-5, atol=1e-5, equal_nan=True):
            report.differences.append(f"output {k}: values differ (max abs diff {_diff(w, g)})")


def _diff(a: np.ndarray, b: np.ndarray) -> str:
    if a.shape != b.shape:
        return f"shapes {a.shape} vs {b.shape}"
    return f"{np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))):.3g}"


_DTYPES = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}

Shape = tuple[tuple[int, ...], np.dtype]


@dataclass(frozen=True)
class Signature:
    """@main's argument and result shapes, and which results carry a sharding annotation."""

    args: list[Shape]
    results: list[Shape]
    annotated_results: frozenset[int]


def main_signature(text: str | bytes) -> Signature:
    """Shapes and dtypes of @main's arguments and results (read with our MLIR parser)."""
    import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
    from jaxlib.mlir import ir

    from .mlir import new_context, parse_module
    from .walker import funcs

    with new_context() as ctx:
        module = parse_module(text, ctx)
        main = next((f for f in funcs(module.operation) if _name(f) == "main"), None)
        if main is None:
            raise ShardyConvertError("the module has no @main function")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        annotated = frozenset(
            k for k, d in enumerate(_result_attrs(main)) if {"mhlo.sharding", "sdy.sharding"} & d
        )
        return Signature(
            [_shape(t) for t in ftype.inputs], [_shape(t) for t in ftype.results], annotated
        )


def _result_attrs(func) -> list[set[str]]:
    from jaxlib.mlir import ir

    if "res_attrs" not in func.attributes:
        return []
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes["res_attrs"])]
    return [{d[i].name for i in range(len(d))} for d in dicts]


def _name(func) -> str:
    from jaxlib.mlir import ir

    return ir.StringAttr(func.attributes["sym_name"]).value


def _shape(t) -> tuple[tuple[int, ...], np.dtype]:
    from jaxlib.mlir import ir

    tensor = ir.RankedTensorType(t)
    element = str(tensor.element_type)
    if element not in _DTYPES:
        raise ShardyConvertError(f"cannot make test inputs of element type {element}")
    import ml_dtypes

    name = _DTYPES[element]
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    return tuple(tensor.shape), dtype


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 8, size=shape).astype(dtype)
    return rng.standard_normal(size=shape).astype(dtype)


def _run(compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import jax
    from jax._src.sharding_impls import GSPMDSharding

    # torch_xla graphs take f64 scalars; without x64 jax would silently make them f32.
    jax.config.update("jax_enable_x64", True)
    args = [
        jax.device_put(value, GSPMDSharding(compiled.devices, sharding))
        for value, sharding in zip(inputs, compiled.parameters)
    ]
    results = compiled.executable.execute_sharded(args)
    values = []
    outs = results.disassemble_into_single_device_arrays()
    for arrays, sharding, (shape, _) in zip(outs, compiled.outputs, compiled.signature.results):
        arr = jax.make_array_from_single_device_arrays(
            shape, GSPMDSharding(compiled.devices, sharding), arrays
        )
        values.append(np.asarray(arr))
    return values


def check_inputs(
    inputs: Sequence[str], devices: int | None, mesh: str | None
) -> Iterator[tuple[str, Report | ShardyConvertError]]:
    """`check`: per graph, convert and compare the compiled programs; yields where (`FILE` or
    `FILE:graph N`) and the report, or the located error."""
    from . import batch, dump
    from .converter import convert

    for item in batch.expand(inputs):
        try:
            source = dump.read(batch.read_input(item.name), item.name)
        except ShardyConvertError as e:
            yield item.name, e.located(file=item.name)
            continue
        count = devices or source.device_count
        ensure_devices(max(count or 1, 1))

        def one(graph: dump.Graph, count: int | None = count) -> Report:
            result = convert(
                graph.text, mesh=mesh, num_devices=devices, fallback_devices=count, validate=True
            )
            return compare(graph.text, result, count or 1)

        for graph, outcome in zip(source.graphs, dump.for_each_graph(source, one, item.name)):
            where = item.name if graph.index is None else f"{item.name}:graph {graph.index}"
            yield where, outcome

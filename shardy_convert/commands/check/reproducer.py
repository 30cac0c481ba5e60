"""`check --reproducer DIR`: a graph whose values differ, written as a reproducer someone can
run without shardy-convert (to file an XLA bug, or to debug a conversion).

DIR/<graph>/ holds the programs of the run that decided the verdict (the f64 rerun's, or the
second draw's), cut down to the outputs that differ (each @main returns only those; ops
nothing uses any more are dropped; XLA's aliasing attributes, which name outputs by index, go):
`gspmd.mlir` (compiled with GSPMD), `shardy.mlir` (with Shardy), `unpartitioned.mlir` (one
device, where there is one), `inputs.npz` (`arg0`, `arg1`, ...), `reproduce.py` (jaxlib and
numpy only: compiles the three on a CPU client of N devices with the options `check` used,
runs them, prints each output's max relative difference) and `README.md` (the verdict and its
evidence). The cut programs are run once more before they are written; where the cut hides
the difference, the whole programs are written instead and the README says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...ir.bindings import ir
from ...ir.parse import new_context, parse_module, print_module
from ...ir.walker import func_name, funcs
from .compiled import compile_module, execute
from .numerics import Run
from .reference import unpartitioned
from .signature import main_signature
from .values import agreements

_SIDE_EFFECTS = ("has_side_effect", "stablehlo.send", "stablehlo.outfeed", "stablehlo.recv")
_OUTPUT_INDEXED = ("mhlo.input_output_alias", "mhlo.spmd_output_sharding")


@dataclass(frozen=True)
class Reproducer:
    """Where a reproducer was written, and whether it is cut to the differing outputs."""

    path: Path
    outputs: tuple[int, ...]
    cut: bool


def write_reproducer(
    directory: str | Path, name: str, run: Run, outputs: list[int], report
) -> Reproducer:
    """Writes the reproducer of `run` (the deciding run) for `outputs` into DIR/`name`."""
    where = Path(directory) / _safe(name)
    where.mkdir(parents=True, exist_ok=True)
    keep = sorted(set(outputs))
    texts = [_text(run.texts[0]), _text(run.texts[1])]
    cut = [_cut(t, keep) for t in texts]
    reference = unpartitioned(cut[0])[0] if run.values[2] is not None else None
    reproduces = _reproduces(cut, reference, run, keep)
    if not reproduces:  # the whole programs, all outputs
        cut, keep = texts, list(range(len(run.values[0])))
        reference = unpartitioned(texts[0])[0] if run.values[2] is not None else None
    files = {"gspmd.mlir": cut[0], "shardy.mlir": cut[1]}
    if reference is not None:
        files["unpartitioned.mlir"] = reference
    for file, text in files.items():
        (where / file).write_text(text)
    np.savez(where / "inputs.npz", **{f"arg{k}": x for k, x in enumerate(run.inputs)})
    n = len(run.gspmd.devices)
    (where / "reproduce.py").write_text(_script(files, n))
    (where / "README.md").write_text(_readme(report, name, n, keep, reproduces))
    return Reproducer(where, tuple(keep), reproduces)


def _script(files: dict[str, str], n: int) -> str:
    """The reproduce.py of `files` on `n` devices: the flags and shapes it needs, as data."""
    flags, shapes = {}, []
    for file, text in files.items():
        signature = main_signature(text)
        flags[file] = list(signature.propagate_to_output())
        shapes = [list(shape) for shape, _ in signature.results]
    script = _SCRIPT.replace("@N@", str(n)).replace("@SHAPES@", repr(shapes))
    return script.replace("@FLAGS@", repr(flags))


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("_") or "graph"


def _text(module: str | bytes) -> str:
    if isinstance(module, str):
        return module
    with new_context() as ctx:
        return print_module(parse_module(module, ctx))


def _cut(text: str, keep: list[int]) -> str:
    """`text` whose @main returns only the outputs `keep`, without the ops that fed only the
    others."""
    with new_context() as ctx:
        module = parse_module(text, ctx)
        for name in _OUTPUT_INDEXED:
            if name in module.operation.attributes:
                del module.operation.attributes[name]
        main = next(f for f in funcs(module.operation) if func_name(f) == "main")
        _return_only(main, keep)
        _drop_dead(main.regions[0].blocks[0])
        return print_module(module)


def _return_only(main: ir.Operation, keep: list[int]) -> None:
    block = main.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    operands = [ret.operands[k] for k in keep]
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create(ret.name, operands=operands)
    ret.erase()
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    results = [ftype.results[k] for k in keep]
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ftype.inputs, results))
    if "res_attrs" in main.attributes:
        attrs = ir.ArrayAttr(main.attributes["res_attrs"])
        main.attributes["res_attrs"] = ir.ArrayAttr.get([attrs[k] for k in keep])
    if "arg_attrs" in main.attributes:  # tf.aliasing_output names outputs by index
        main.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [
                _without(ir.DictAttr(d), "tf.aliasing_output")
                for d in ir.ArrayAttr(main.attributes["arg_attrs"])
            ]
        )


def _without(attrs: ir.DictAttr, name: str) -> ir.DictAttr:
    return ir.DictAttr.get(
        {attrs[i].name: attrs[i].attr for i in range(len(attrs)) if attrs[i].name != name}
    )


def _drop_dead(block: ir.Block) -> None:
    """Erases the ops of `block` whose results nothing uses, last first (so a chain goes in
    one pass); never the terminator or an op with side effects."""
    ops = [op.operation for op in block.operations][:-1]
    for op in reversed(ops):
        if any(s in str(op.name) or s in op.attributes for s in _SIDE_EFFECTS):
            continue
        if all(not list(result.uses) for result in op.results):
            op.erase()


def _reproduces(texts: list[str], reference: str | None, run: Run, keep: list[int]) -> bool:
    """Whether the cut programs still show the run's difference on the run's inputs."""
    try:
        n = len(run.gspmd.devices)
        gspmd = execute(compile_module(texts[0], n, shardy=False), run.inputs)
        shardy = execute(compile_module(texts[1], n, shardy=True), run.inputs)
        ref = (
            None
            if reference is None
            else execute(compile_module(reference, 1, shardy=False), run.inputs)
        )
    except Exception:  # the cut program does not compile or run: write the whole one
        return False
    want = [run.values[0][k] for k in keep], [run.values[1][k] for k in keep]
    same = all(a.exact or a.close for a in agreements(want[0], gspmd) + agreements(want[1], shardy))
    if ref is not None:
        ref_values = run.values[2]  # a reference program: the run has its values
        same = same and all(
            a.close
            for a in agreements([ref_values[k] for k in keep], ref)  # type: ignore[index]
        )
    return same


def _readme(report, name: str, n: int, keep: list[int], cut: bool) -> str:
    evidence = ([str(report.rerun)] if report.rerun else []) + report.differences
    run = report.rerun.run if report.rerun else "first run"
    outputs = ("output " if len(keep) == 1 else "outputs ") + ", ".join(map(str, keep))
    what = (
        f"returning only {outputs} of the graph"
        if cut
        else "whole (cut to the differing outputs, the difference did not show)"
    )
    lines = [
        f"# {name}: {report.verdict.value}",
        "",
        *(f"- {line}" for line in evidence),
        "",
        f"The programs of the {run}, on {n} CPU devices, {what}: `gspmd.mlir` compiles with "
        "GSPMD, `shardy.mlir` with Shardy, `unpartitioned.mlir` on one device; `inputs.npz` "
        "holds the inputs (`arg0`, `arg1`, ...).",
        "",
        "Run `python reproduce.py` (jax, jaxlib and numpy; the jaxlib that found it is the one "
        "`shardy-convert --version` names).",
        "",
    ]
    return "\n".join(lines)


_SCRIPT = '''"""Reproduces a difference `shardy-convert check` found: compiles gspmd.mlir (GSPMD),
shardy.mlir (Shardy) and unpartitioned.mlir (one device) on jaxlib's CPU client with the
options check used, runs them on inputs.npz and prints how far apart each output is."""

import os

import jax
import numpy as np
from jaxlib import xla_client as xc

N = @N@
# Per program: XLA's allow_spmd_sharding_propagation_to_output, one flag per result.
FLAGS = @FLAGS@
SHAPES = @SHAPES@  # each output's shape
HERE = os.path.dirname(os.path.abspath(__file__))


def options(n, shardy, flags):
    opts = xc.CompileOptions()
    build = opts.executable_build_options
    build.num_partitions, build.num_replicas = n, 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    build.allow_spmd_sharding_propagation_to_output = flags
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    return opts


def sharding(protos, k):
    return xc.HloSharding.replicate() if protos is None else xc.HloSharding.from_proto(protos[k])


def run(name, n, shardy, inputs):
    client = xc.make_cpu_client(num_devices=n)
    devices = tuple(client.devices()[:n])
    text = open(os.path.join(HERE, name)).read()
    exe = client.compile_and_load(text, xc.DeviceList(devices), options(n, shardy, FLAGS[name]))
    params, outs = exe.get_parameter_shardings(), exe.get_output_shardings()
    args = [
        jax.device_put(x, xc.GSPMDSharding(devices, sharding(params, k)))
        for k, x in enumerate(inputs)
    ]
    shards = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    return [
        np.asarray(
            jax.make_array_from_single_device_arrays(
                tuple(SHAPES[k]), xc.GSPMDSharding(devices, sharding(outs, k)), arrays
            )
        )
        for k, arrays in enumerate(shards)
    ]


def relative(a, b):
    a, b = np.asarray(a).astype(np.complex128), np.asarray(b).astype(np.complex128)
    finite = np.isfinite(a) & np.isfinite(b)
    scale = max(np.max(np.abs(a[finite]), initial=0.0), np.max(np.abs(b[finite]), initial=0.0))
    diff = np.max(np.abs(a[finite] - b[finite]), initial=0.0)
    return diff / scale if scale else 0.0


def main():
    jax.config.update("jax_enable_x64", True)  # f64 programs and inputs
    data = np.load(os.path.join(HERE, "inputs.npz"))
    inputs = [data[f"arg{k}"] for k in range(len(data.files))]
    gspmd, shardy = run("gspmd.mlir", N, False, inputs), run("shardy.mlir", N, True, inputs)
    ref = run("unpartitioned.mlir", 1, False, inputs) if "unpartitioned.mlir" in FLAGS else None
    for k, (a, b) in enumerate(zip(gspmd, shardy)):
        line = f"output {k}: GSPMD vs Shardy {relative(a, b):.3g}"
        if ref is not None:
            line += f", GSPMD vs unpartitioned {relative(ref[k], a):.3g}"
            line += f", Shardy vs unpartitioned {relative(ref[k], b):.3g}"
        print(line)


if __name__ == "__main__":
    main()
'''

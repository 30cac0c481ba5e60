#!/usr/bin/env python3
"""Where the plugin path's time goes per program, part by part (not run by `make bench`:
section 11, bench_plugin_path.py, measures the whole; this says what its ratio is made of).

    .venv-torch/bin/python bench/plugin_parts.py [--programs N] [--reps R]

1. Records what torch_xla hands the plugin for the soak's first N training steps (the
   program, its format and compile options) and the wrapper's answer, in two torch_xla runs
   through `use_plugin`: one handing StableHLO (the default), one handing HLO protos
   (`stablehlo_compile=False`). torch_xla's `ReplicateShardedData` compiles are left out.
2. In a fresh process, a pypjrt client of the same plugin (8 CPU devices) compiles each
   recorded step R times in turns: torch_xla's GSPMD program as an HLO proto, the same
   program as torch_xla's StableHLO portable artifact, and the wrapper's Shardy answer (a
   portable artifact); and the hook (`plugin.program.convert`, a fresh conversion each time)
   converts each step from either handoff, outside torch_xla.

Prints one JSON line of medians in ms. The difference between the first two compiles is
what the plugin pays to read a StableHLO program instead of HLO; between the last two, what
Shardy's compile costs over GSPMD's on the same program.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV_RECORD = "SHARDY_CONVERT_BENCH_RECORD"
STEP_SIZE = 1000  # bytes: a training step's program is larger, ReplicateShardedData's smaller


def record_hook(code: bytes, form: bytes, options: bytes):
    """The wrapper's hook, keeping each training step handed to it and its answer."""
    from shardy_convert.plugin import wrapper

    answer = wrapper.on_compile(code, form, options)
    folder = Path(os.environ[ENV_RECORD])
    if len(code) > STEP_SIZE and isinstance(answer, tuple):
        count = len(list(folder.iterdir()))
        (folder / f"{count:04d}.pkl").write_bytes(pickle.dumps((code, form, options, answer)))
    return answer


def _record(folder: Path, programs: int, stablehlo: bool) -> None:
    """One torch_xla run through the wrapper, recording into `folder`."""
    sys.path.insert(0, str(ROOT))
    from bench.bench_plugin_path import DEVICES, _program
    from shardy_convert.torch_xla import use_plugin
    from tests import pjrt_plugin

    os.environ[ENV_RECORD] = str(folder)
    os.environ["SHARDY_CONVERT_HOOK"] = "bench.plugin_parts:record_hook"
    use_plugin(
        pjrt_plugin.plugin_path(),
        create_options={"cpu_device_count": DEVICES},
        stablehlo_compile=stablehlo,
    )
    import torch_xla.runtime as xr

    xr.use_spmd()
    for k in range(programs):
        _program(64 + 8 * k)


def _load(folder: Path) -> list[tuple]:
    return [pickle.loads(p.read_bytes()) for p in sorted(folder.iterdir())]


def _measure(stablehlo_dir: Path, hlo_dir: Path, reps: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from shardy_convert.plugin import program
    from tests import pjrt_plugin

    plugin = pjrt_plugin.get_client(8)
    client = plugin.client
    compile_raw = _raw_compiler(client)
    # what the wrapper reads from the plugin for programs handed as HLO
    version = "" if plugin.stablehlo_versions is None else plugin.stablehlo_versions[1]
    from_stablehlo, from_hlo = _load(stablehlo_dir), _load(hlo_dir)
    steps = min(len(from_stablehlo), len(from_hlo))
    times: dict[str, list[float]] = {
        "compile GSPMD, HLO": [],
        "compile GSPMD, StableHLO": [],
        "compile Shardy (the answer)": [],
        "hook, StableHLO handed": [],
        "hook, HLO handed": [],
    }
    for _ in range(reps):
        for (code, form, options, answer), (hlo, hlo_form, hlo_options, _) in zip(
            from_stablehlo[:steps], from_hlo[:steps]
        ):
            times["compile GSPMD, HLO"].append(compile_raw(hlo, hlo_form, hlo_options))
            times["compile GSPMD, StableHLO"].append(compile_raw(code, form, options))
            times["compile Shardy (the answer)"].append(compile_raw(*answer[:3]))
            t0 = time.perf_counter()
            program.convert(code, form.decode(), options)
            t1 = time.perf_counter()
            program.convert(hlo, hlo_form.decode(), hlo_options, plugin_version=version)
            times["hook, StableHLO handed"].append(t1 - t0)
            times["hook, HLO handed"].append(time.perf_counter() - t1)
    return {
        "steps": steps,
        "reps": reps,
        "median_ms": {k: round(statistics.median(v) * 1e3, 2) for k, v in times.items()},
    }


def _raw_compiler(client):
    """`compile(code, format, options bytes)` -> seconds of one PJRT_Client_Compile (the
    executable is freed): the options exactly as torch_xla or the wrapper wrote them, which
    pypjrt's own `compile` (options from its CompileOptions) cannot take."""
    import pypjrt

    plugin = client._plugin

    def compile_raw(code: bytes, form: bytes, options: bytes) -> float:
        buffers = [ctypes.create_string_buffer(b, len(b)) for b in (code, form, options)]
        void = [ctypes.cast(b, ctypes.c_void_p) for b in buffers]
        program = plugin.args(
            "PJRT_Program", code=void[0], code_size=len(code), format=void[1], format_size=len(form)
        )
        args = plugin.args(
            "PJRT_Client_Compile_Args",
            client=client._check(),
            program=ctypes.addressof(program),
            compile_options=void[2],
            compile_options_size=len(options),
        )
        t0 = time.perf_counter()
        plugin.call("PJRT_Client_Compile", args)
        seconds = time.perf_counter() - t0
        pypjrt.Executable(plugin, args.executable, client)  # owns it: freed when dropped
        return seconds

    return compile_raw


def _child(*args: str) -> str:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": path}
    p = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    if p.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=12)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--record", nargs=2, help=argparse.SUPPRESS)  # FOLDER stablehlo|hlo
    ap.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)  # STABLEHLO_DIR HLO_DIR
    args = ap.parse_args()
    if args.record:
        _record(Path(args.record[0]), args.programs, args.record[1] == "stablehlo")
        return
    if args.measure:
        print(json.dumps(_measure(Path(args.measure[0]), Path(args.measure[1]), args.reps)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folders = [Path(tmp, "stablehlo"), Path(tmp, "hlo")]
        for folder in folders:
            folder.mkdir()
            _child("--record", str(folder), folder.name, "--programs", str(args.programs))
        out = _child("--measure", *map(str, folders), "--reps", str(args.reps))
    print(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()

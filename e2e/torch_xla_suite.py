"""Runs PyTorch/XLA's own SPMD test suite twice and compares: on torch_xla's built-in CPU
runtime, and through shardy-convert's wrapper (`use_plugin` on xla-cpu-pjrt).

    python -m e2e.torch_xla_suite CHECKOUT [--logs DIR] [--files NAME ...] [--skip NAME ...]
        [--devices 8] [--timeout S] [--modes builtin,plugin] [--builtin-from RESULTS]
        [--no-rerun]

CHECKOUT is a copy of pytorch/xla's repository (tag v2.9.0, the release torch_xla 2.9 is);
its `test/spmd/test_*.py` files run, unedited, one file per pytest process, in sequence (each
takes GBs), under `nice`. The built-in run sets PJRT_DEVICE=CPU, CPU_NUM_DEVICES=N; the plugin
run loads e2e/torch_xla_suite_plugin.py as a pytest plugin, which calls `use_plugin` before
pytest imports a test file (the suite's skip conditions read the device type at import).

Every test that passes built-in and fails through the plugin is rerun alone, in a process of
its own: a failure that goes away alone was caused by an earlier test of its file (left-over
process state), and is reported apart. The table it prints: passed both, plugin-only failures
(alone too), plugin-only in the file run but passing alone, built-in-only failures; then the
tests skipped on one side only (the suite's conditions on the device name). Logs, JUnit XML
and `results.json` stay in --logs (default: a new folder under /tmp).

--skip leaves files out of both runs (test_train_spmd_linear_model.py trains for over half an
hour a run on a 2-core machine); --builtin-from takes the built-in run from an earlier
run's results.json (same checkout and torch_xla), so only the plugin side runs again.

The run needs the torch venv (torch 2.9, torch-xla 2.9, xla-cpu-pjrt, pytest) and this
repository on PYTHONPATH (it puts itself there for the children); `xs.shard_as` needs torchax
(torch_xla imports it for `call_jax`), which a PYTHONPATH entry can supply.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("builtin", "plugin")
PLUGIN = "e2e.torch_xla_suite_plugin"
PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass
class Outcome:
    """One test's result in one run: passed, failed (error included) or skipped, why."""

    status: str
    message: str = ""


@dataclass
class Run:
    """Every test's outcome in one mode, keyed `file::Class::test`."""

    tests: dict[str, Outcome] = field(default_factory=dict)


def suite_files(checkout: Path, names: list[str] | None, skip: list[str]) -> list[Path]:
    folder = checkout / "test" / "spmd"
    if not folder.is_dir():
        raise SystemExit(f"{checkout} has no test/spmd (give a pytorch/xla checkout)")
    files = sorted(folder.glob("test_*.py"))
    if names:
        files = [f for f in files if f.name in names or f.stem in names]
    return [f for f in files if f.name not in skip and f.stem not in skip]


def environment(checkout: Path, mode: str, devices: int) -> dict:
    """The child's environment: the suite's own import paths (its files import each other and
    `test/utils`), this repository, and the runtime of `mode`."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1", PYTHONUNBUFFERED="1")
    for name in ("PJRT_DEVICE", "XLA_STABLEHLO_COMPILE", "XLA_USE_SPMD", "SHARDY_CONVERT_PLUGIN"):
        env.pop(name, None)
    paths = [str(checkout / "test" / "spmd"), str(checkout / "test"), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["SHARDY_SUITE_DEVICES"] = str(devices)
    if mode == "builtin":
        env["PJRT_DEVICE"] = "CPU"
        env["CPU_NUM_DEVICES"] = str(devices)
    return env


def pytest_command(mode: str, ini: Path, junit: Path, targets: list[str], rootdir: Path) -> list:
    command = ["nice", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-c", str(ini), f"--rootdir={rootdir}", f"--junitxml={junit}", "-rfEs"]
    if mode == "plugin":
        command += ["-p", PLUGIN]
    return command + targets


def run_pytest(checkout, mode, targets, logs: Path, stem: str, args) -> Run:
    """One pytest process over `targets`; its outcomes from the JUnit XML. A process that died
    (crash, timeout) before writing it counts each target as failed with the log's tail."""
    junit, log = logs / f"{stem}.xml", logs / f"{stem}.log"
    junit.unlink(missing_ok=True)
    rootdir = checkout / "test" / "spmd"
    command = pytest_command(mode, args.ini, junit, targets, rootdir)
    start = time.monotonic()
    with log.open("w") as out:
        try:
            code = subprocess.run(
                command,
                cwd=rootdir,
                env=environment(checkout, mode, args.devices),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=args.timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    seconds = time.monotonic() - start
    print(f"  {mode:8} {stem}: exit {code}, {seconds:.0f} s", flush=True)
    if junit.is_file():
        run = read_junit(junit)
        if run.tests:
            return run
    tail = log.read_text(errors="replace")[-2000:]
    return Run({t: Outcome(FAILED, f"the pytest process ended ({code}): {tail}") for t in targets})


def read_junit(path: Path) -> Run:
    run = Run()
    for case in ET.parse(path).getroot().iter("testcase"):
        file, klass = _split_classname(case.get("classname", ""))
        key = f"{file}::{klass}::{case.get('name')}" if klass else f"{file}::{case.get('name')}"
        run.tests[key] = _outcome(case)
    return run


def _split_classname(classname: str) -> tuple[str, str]:
    """`test_xla_sharding.BasicXlaShardingTest` -> the file (the last `test_*` part) and the
    class (nothing for a module-level test function)."""
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        if parts[i - 1].startswith("test_"):
            return parts[i - 1] + ".py", ".".join(parts[i:])
    return classname, ""


def _outcome(case) -> Outcome:
    for tag in ("failure", "error"):
        node = case.find(tag)
        if node is not None:
            return Outcome(FAILED, (node.get("message") or node.text or "")[:4000])
    node = case.find("skipped")
    if node is not None:
        return Outcome(SKIPPED, node.get("message") or "")
    return Outcome(PASSED)


def run_mode(checkout, mode, files, logs: Path, args) -> Run:
    folder = logs / mode
    folder.mkdir(parents=True, exist_ok=True)
    run = Run()
    for path in files:
        run.tests.update(run_pytest(checkout, mode, [path.name], folder, path.stem, args).tests)
    return run


def earlier_run(results: Path, mode: str, files: set[str]) -> Run:
    """One mode's outcomes from an earlier run, for the files run now: its results.json, or
    its folder of JUnit XML (`LOGS/builtin`, while that run is still going on)."""
    if results.is_dir():
        run = Run()
        for name in sorted(files):
            xml = results / (Path(name).stem + ".xml")
            got = read_junit(xml).tests if xml.is_file() else {}
            run.tests.update(got or {name: Outcome(FAILED, f"no result in {results}")})
        return run
    data = json.loads(results.read_text())["runs"][mode]
    return Run({t: Outcome(**o) for t, o in data.items() if t.split("::")[0] in files})


def rerun_alone(checkout, tests: list[str], logs: Path, args) -> Run:
    """Each test in a pytest process of its own, through the plugin."""
    folder = logs / "plugin-alone"
    folder.mkdir(parents=True, exist_ok=True)
    run = Run()
    for i, test in enumerate(tests):
        got = run_pytest(checkout, "plugin", [test], folder, f"{i:03d}", args).tests
        run.tests[test] = got.get(test) or next(iter(got.values()), Outcome(FAILED, "not run"))
    return run


def table(builtin: Run, plugin: Run, alone: Run) -> dict[str, list[str]]:
    """The comparison, each row the sorted test ids."""
    rows: dict[str, list[str]] = {
        "passed both": [],
        "plugin-only failures (alone too)": [],
        "plugin-only failures in the file run, passing alone": [],
        "built-in-only failures": [],
        "failed both": [],
        "skipped built-in only": [],
        "skipped plugin only": [],
        "skipped both": [],
    }
    for test in sorted(set(builtin.tests) | set(plugin.tests)):
        b = builtin.tests.get(test, Outcome(FAILED, "not run")).status
        p = plugin.tests.get(test, Outcome(FAILED, "not run")).status
        rows[_row(b, p, alone.tests.get(test))].append(test)
    return rows


def _row(b: str, p: str, alone: Outcome | None) -> str:
    if b == p == PASSED:
        return "passed both"
    if b == p:
        return "skipped both" if b == SKIPPED else "failed both"
    if b == SKIPPED or p == SKIPPED:
        return "skipped built-in only" if b == SKIPPED else "skipped plugin only"
    if b == PASSED:
        if alone is not None and alone.status == PASSED:
            return "plugin-only failures in the file run, passing alone"
        return "plugin-only failures (alone too)"
    return "built-in-only failures"


def report(rows: dict[str, list[str]], plugin: Run, alone: Run, builtin: Run) -> str:
    width = max(len(name) for name in rows)
    lines = [f"{name:<{width}}  {len(tests):4d}" for name, tests in rows.items()]
    for name in ("plugin-only failures (alone too)", "built-in-only failures"):
        for test in rows[name]:
            side = alone if name.startswith("plugin") else builtin
            got = side.tests.get(test) or plugin.tests.get(test) or Outcome(FAILED)
            lines.append(f"  {name.split()[0]}: {test}: {_first_line(got.message)}")
    for name, other in (("skipped built-in only", plugin), ("skipped plugin only", builtin)):
        side = "through the plugin" if other is plugin else "built-in"
        for test in rows[name]:
            got = other.tests.get(test) or Outcome(FAILED)
            lines.append(f"  {name}: {test}: {got.status} {side} {_first_line(got.message)}")
    for test in rows["plugin-only failures in the file run, passing alone"]:
        lines.append(f"  in the file run only: {test}: {_first_line(plugin.tests[test].message)}")
    return "\n".join(lines)


def _first_line(message: str) -> str:
    text = " ".join(message.split())
    return text[:300]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a pytorch/xla checkout (tag v2.9.0)")
    parser.add_argument("--logs", type=Path, help="where logs go (default: a new /tmp folder)")
    parser.add_argument("--files", nargs="*", help="only these files of test/spmd")
    parser.add_argument("--skip", nargs="*", default=[], help="files left out of both runs")
    parser.add_argument(
        "--builtin-from", type=Path, help="an earlier run's results.json or LOGS/builtin folder"
    )
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=3600, help="per pytest process (s)")
    parser.add_argument("--modes", default="builtin,plugin")
    parser.add_argument("--no-rerun", action="store_true")
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    logs = args.logs or Path(tempfile.mkdtemp(prefix="torch-xla-suite-"))
    logs.mkdir(parents=True, exist_ok=True)
    args.ini = logs / "pytest.ini"
    args.ini.write_text("[pytest]\n")  # no ini of ours, none of the checkout's
    files = suite_files(checkout, args.files, args.skip)
    print(f"{len(files)} files of {checkout}/test/spmd; logs in {logs}", flush=True)
    runs = {}
    if args.builtin_from:
        runs["builtin"] = earlier_run(args.builtin_from, "builtin", {f.name for f in files})
    for mode in args.modes.split(","):
        if mode not in runs:
            runs[mode] = run_mode(checkout, mode, files, logs, args)
    builtin, plugin = runs.get("builtin", Run()), runs.get("plugin", Run())
    suspects = [
        t
        for t, o in plugin.tests.items()
        if o.status == FAILED and builtin.tests.get(t, Outcome(FAILED)).status == PASSED
    ]
    alone = Run() if args.no_rerun else rerun_alone(checkout, suspects, logs, args)
    rows = table(builtin, plugin, alone)
    (logs / "results.json").write_text(
        json.dumps(
            {
                "rows": rows,
                "runs": {
                    m: {t: vars(o) for t, o in r.tests.items()}
                    for m, r in {
                        "builtin": builtin,
                        "plugin": plugin,
                        "plugin-alone": alone,
                    }.items()
                },
            },
            indent=1,
        )
    )
    print(report(rows, plugin, alone, builtin))
    return 1 if rows["plugin-only failures (alone too)"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""The command line on hostile inputs, in real subprocesses: it never dies by a signal, names
every bad file with its graph and location, writes nothing for a bad input (an existing output
stays as it was), converts the good inputs of a batch, leaves the inputs alone, and refuses
absurd sizes without using memory for them.

Starting the CLI costs ~1 s, so the inputs come in batches: one directory of ~150 malformed
modules, bytecode files and dumps (from `fuzz_inputs`, fixed seeds) plus a few good ones,
converted by one process (and again with --jobs 2).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TESTDATA
from tests.fuzz_inputs import DUMP_FAMILIES, MODULE_FAMILIES, case
from tests.test_fuzz_modules import errors_of

CLI = [sys.executable, "-m", "shardy_convert"]
SEEDS = 8
GOOD = [
    TESTDATA / "torch_xla" / "matmul_2x4.mlir",
    TESTDATA / "torch_xla" / "tp_mlp_train.dump",
    TESTDATA / "jax" / "shard_map_full.gspmd.mlir",
]


def run_cli(*args, stdin: bytes | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        [*CLI, *map(str, args)], input=stdin, capture_output=True, timeout=timeout, env=env
    )


def assert_no_signal(result: subprocess.CompletedProcess) -> None:
    assert result.returncode in (0, 1, 2), (result.returncode, result.stderr[-2000:])
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")[-3000:]


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root: its hash and modification time."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


class Batch:
    """A directory of inputs, which of them must fail, and what their errors must say."""

    def __init__(self, root: Path):
        self.root = root
        self.inputs = root / "in"
        self.inputs.mkdir()
        self.bad: dict[str, object] = {}  # file name -> Case
        self.good: list[str] = []
        for family in sorted(MODULE_FAMILIES) + sorted(DUMP_FAMILIES):
            for seed in range(SEEDS):
                self.add(family, seed)
        for path in GOOD:
            shutil.copy(path, self.inputs / path.name)
            self.good.append(path.name)

    def add(self, family: str, seed: int) -> None:
        c = case(family, seed)
        suffix = ".dump" if c.is_dump else ".mlirbc" if isinstance(c.data, bytes) else ".mlir"
        name = f"{family}-{seed}{suffix}"
        path = self.inputs / name
        if isinstance(c.data, bytes):
            path.write_bytes(c.data)
        else:
            path.write_bytes(c.data.encode("utf-8", "surrogatepass"))
        if not c.may_pass or errors_of(c):
            self.bad[name] = c
        else:
            self.good.append(name)


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Batch:
    return Batch(tmp_path_factory.mktemp("fuzz_cli"))


def _lines_by_file(stderr: str, root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    prefix = str(root) + os.sep
    for line in stderr.splitlines():
        if line.startswith(prefix):
            name, _, rest = line[len(prefix) :].partition(":")
            found.setdefault(name, []).append(rest)
    return found


_LOCATION = re.compile(r"^(graph \d+:)?(\d+):\d+: ")


def check_batch_output(batch: Batch, result: subprocess.CompletedProcess, out: Path) -> None:
    assert_no_signal(result)
    assert result.returncode == 1
    stderr = result.stderr.decode("utf-8", "replace")
    total = len(batch.bad) + len(batch.good)
    assert f"{len(batch.good)} of {total} inputs converted" in stderr
    assert result.stdout == b""
    errors = _lines_by_file(stderr, batch.inputs)
    assert sorted(errors) == sorted(batch.bad), "bad inputs listed != bad inputs"
    for name, c in batch.bad.items():
        first = errors[name][0]
        located = _LOCATION.match(first)
        if name.endswith(".mlirbc"):
            assert located or first.startswith(" error: cannot read"), (name, first)
            continue
        assert located, (name, first)
        if c.is_dump and "graph" in c.expect:
            assert located.group(1), (name, first)
        for part in c.expect:
            assert part in first, (name, part, first)
        if c.line is not None:
            assert int(located.group(2)) == c.line, (name, first)
    written = {p.name for p in out.iterdir()}
    assert written == set(batch.good) | {"existing.mlir"}, written ^ set(batch.good)
    assert all(b"sdy.mesh" in (out / name).read_bytes() for name in batch.good)


def test_a_batch_of_bad_inputs_converts_the_good_ones_and_lists_the_bad(batch, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    bad_name = next(n for n in batch.bad if n.endswith(".mlir"))
    (out / bad_name).write_text("old output\n")
    (out / "existing.mlir").write_text("unrelated\n")
    before_inputs, before_out = snapshot(batch.inputs), snapshot(out)
    result = run_cli("convert", batch.inputs, "-o", out)
    assert snapshot(batch.inputs) == before_inputs, "an input was modified"
    assert (out / bad_name).read_text() == "old output\n"
    assert snapshot(out)[bad_name] == before_out[bad_name]
    (out / bad_name).unlink()
    check_batch_output(batch, result, out)


def test_the_same_batch_in_two_worker_processes(batch, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "existing.mlir").write_text("unrelated\n")
    result = run_cli("convert", batch.inputs, "-o", out, "--jobs", "2")
    check_batch_output(batch, result, out)


def test_v2_on_the_batch_never_dies(batch, tmp_path):
    result = run_cli("v2", batch.inputs, "-o", tmp_path / "out")
    assert_no_signal(result)
    assert result.returncode == 1
    assert b"inputs converted" in result.stderr


def test_a_failed_conversion_leaves_an_existing_output_untouched(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(case("device_counts_disagree", 0).data)
    target = tmp_path / "target.mlir"
    target.write_text("precious\n")
    mtime = target.stat().st_mtime_ns
    result = run_cli("convert", bad, "-o", target)
    assert_no_signal(result)
    assert result.returncode == 1
    assert re.match(rf"{re.escape(str(bad))}:\d+:\d+: .*error: sharding \"", result.stderr.decode())
    assert target.read_text() == "precious\n"
    assert target.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir", "target.mlir"]


def test_garbage_on_stdin_is_a_located_error():
    data = case("garbage_bytecode", 3).data[:40] + b"\xff\xfe" * 100
    result = run_cli("convert", "-", stdin=data)
    assert_no_signal(result)
    assert result.returncode == 1
    assert result.stderr.startswith(b"-:")
    text = run_cli("convert", "-", stdin=b"module {\n  func.func @main( {\n")
    assert text.returncode == 1
    assert text.stderr.startswith(b"-:2:"), text.stderr


def test_usage_errors_exit_2_without_a_traceback(tmp_path):
    result = run_cli("convert", tmp_path / "x.mlir", "--num-devices", "-3", "--emit", "pdf")
    assert_no_signal(result)
    assert result.returncode == 2


_RSS = """
import resource, sys
from shardy_convert.cli.main import main
try:
    main(sys.argv[1:])
finally:
    print("MAXRSS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""

ABSURD = [
    "{devices=[1000000000]<=[1000000000]}",
    "{devices=[65536,65536]<=[4294967296]}",
    "{devices=[2,6291456]<=[4194304,3]T(1,0) last_tile_dim_replicate}",
    "{devices=[4096,4096]<=[4096,4096]T(1,0) last_tile_dims={manual}}",
    "{devices=[16777216]<=[16777216]}",
    "{devices=[2,8388608]<=[16777216]}",
]


def _max_rss_kb(*args) -> tuple[subprocess.CompletedProcess, int]:
    result = subprocess.run(
        [sys.executable, "-c", _RSS, *map(str, args)], capture_output=True, timeout=600
    )
    rss = re.search(rb"MAXRSS (\d+)", result.stderr)
    assert rss, result.stderr[-2000:]
    return result, int(rss.group(1))


def test_absurd_sizes_are_refused_before_memory_is_used(tmp_path):
    from tests.fuzz_inputs import module_with

    absurd = tmp_path / "absurd"
    absurd.mkdir()
    for k, text in enumerate(ABSURD):
        rank = 2 if "," in text.split("]")[0] else 1
        rank -= "last_tile" in text
        module, _ = module_with([("arg", text, (4,) * rank), ("result", text, (4,) * rank)])
        (absurd / f"absurd{k}.mlir").write_text(module)
    small = tmp_path / "small"
    small.mkdir()
    shutil.copy(GOOD[0], small / GOOD[0].name)
    baseline_result, baseline = _max_rss_kb("convert", small, "-o", tmp_path / "out0")
    assert baseline_result.returncode == 0, baseline_result.stderr
    result, rss = _max_rss_kb("convert", absurd, "-o", tmp_path / "out")
    assert_no_signal(result)
    assert rss < baseline + 64 * 1024, f"{rss} kB against {baseline} kB for one small module"

"""`make bench BASE=<git ref>`: this tree against another ref of the project, figure by figure,
in one run on one machine.

The ref is checked out into a temporary git worktree (removed at the end, also on failure),
and nothing is installed: a worker process imports the package from the tree it measures
(PYTHONPATH first), with the same venv, jaxlib and inputs. For each module the two trees'
workers take turns (base, head, base, head, ...), `rounds` each, so a change in the machine's
load hits both alike. Each worker runs the floor (jaxlib's parse + verify + print) and
`convert` back to back K times: its figure is the median of the K paired convert / floor
ratios (run.py's `paired_ratio`), which divides the machine's speed out.

A figure is reported as base, head, head / base, and its noise: the spread of the figure over
the rounds of each side (the larger of the two relative spreads, max - min over median). A
change beyond the noise is WORSE (head slower) or BETTER; inside it, "within noise".
The command line's cold start is one more figure (`cold_dump`): each side's `python -m
shardy_convert convert DUMP` against `python -c "import jaxlib.mlir.ir"`, in turns, as run.py
measures this tree's.

Printed, never asserted.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class BaseRefError(Exception):
    """The base ref cannot be checked out (an unknown ref, not a git clone)."""


@dataclass(frozen=True)
class Compared:
    """One figure of both trees: its value per round on each side, and what they say."""

    name: str
    base: tuple[float, ...]
    head: tuple[float, ...]

    @property
    def base_value(self) -> float:
        return statistics.median(self.base)

    @property
    def head_value(self) -> float:
        return statistics.median(self.head)

    @property
    def ratio(self) -> float:
        return self.head_value / self.base_value

    @property
    def noise(self) -> float:
        """The larger relative spread of the two sides' rounds (0 with one round each)."""
        return max(_spread(self.base), _spread(self.head))

    @property
    def verdict(self) -> str:
        """WORSE / BETTER where head and base differ by more than the noise (a larger figure
        is worse: these are times), else "within noise"."""
        if self.ratio - 1 > self.noise:
            return "WORSE"
        if 1 - self.ratio > self.noise:
            return "BETTER"
        return "within noise"

    def line(self) -> str:
        return (
            f"{self.name:<22}{self.base_value:8.3f}{self.head_value:8.3f}{self.ratio:9.3f}x"
            f"{self.noise * 100:8.1f}%  {self.verdict}"
        )


def _spread(values: tuple[float, ...]) -> float:
    if len(values) < 2:
        return 0.0
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else 0.0


HEADER = f"{'figure':<22}{'base':>8}{'head':>8}{'head/base':>10}{'noise':>9}  verdict"


@contextlib.contextmanager
def worktree(ref: str, repo: Path = ROOT) -> Iterator[Path]:
    """`ref` checked out (detached) in a temporary worktree of `repo` (this clone); removed
    after."""
    where = Path(tempfile.mkdtemp(prefix="shardy-convert-base-"))
    shutil.rmtree(where)  # git makes the folder itself
    made = subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", str(where), ref],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        why = (made.stderr.strip().splitlines() or ["?"])[-1]
        raise BaseRefError(f"cannot check out {ref!r}: {why}")
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "remove", "--force", str(where)],
            capture_output=True,
        )
        shutil.rmtree(where, ignore_errors=True)


def tree_env(tree: Path) -> dict:
    """The environment of a worker that imports the package from `tree`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH", "")) if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def paired_figure(path: Path, *, tree: Path, runs: int, budget: float) -> float | str:
    """One worker of run.py (`--worker both`) on `path` with the package of `tree`: the
    median paired convert / floor ratio; the worker's error text where it failed."""
    import json

    import run  # bench/run.py, on sys.path as this module's folder

    cmd = [sys.executable, run.__file__, "--worker", "both", str(path)]
    cmd += ["--runs", str(runs), "--budget", str(budget)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=tree_env(tree))
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["?"])[-1][:200]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return run.paired_ratio(found["times"]["floor"], found["times"]["convert"])


def cold_start_figure(dump: Path, tree: Path, runs: int) -> float | str:
    """The command line of `tree` converting `dump` in a new process, against `python -c
    "import jaxlib.mlir.ir"`, `runs` times in turns: the median paired ratio (run.py's
    cold-start figure, for any tree: `python -m shardy_convert`, the tree byte-compiled
    first as an install would leave it); the error text where it failed. It runs in `tree`:
    `python -m` puts the working directory first on sys.path, before PYTHONPATH."""
    import compileall

    import run  # bench/run.py, on sys.path as this module's folder

    compileall.compile_dir(tree / "shardy_convert", quiet=2)
    env = tree_env(tree)
    floor = [sys.executable, "-c", "import jaxlib.mlir.ir"]
    cli = [sys.executable, "-m", "shardy_convert", "convert", str(dump)]
    walls: list[list[float]] = [[], []]
    for _ in range(runs):
        for k, cmd in enumerate((floor, cli)):
            t0 = time.perf_counter()
            done = subprocess.run(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tree
            )
            walls[k].append(time.perf_counter() - t0)
            if done.returncode != 0:
                return (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
    return run.paired_ratio(*walls)


def compare_modules(
    ref: str,
    paths: dict[str, Path],
    runs: int,
    rounds: int,
    budget: float,
    cold_dump: Path | None = None,
) -> list[Compared]:
    """Each module's convert / floor ratio under `ref` and under this tree, interleaved; and,
    with `cold_dump`, the command line's cold start on it likewise ("cold start")."""
    out = []
    print(f"\nthis tree against {ref} (convert / floor, median of {runs} paired runs a worker; ")
    print(f"the workers of both take turns, {rounds} rounds each):")
    print(HEADER)
    with worktree(ref) as base:
        measures = {
            name: functools.partial(paired_figure, path, runs=runs, budget=budget)
            for name, path in paths.items()
        }
        if cold_dump is not None:
            measures["cold start"] = functools.partial(cold_start_figure, cold_dump, runs=runs * 2)
        for name, measure in measures.items():
            figures: dict[str, list[float]] = {"base": [], "head": []}
            failed = None
            for _ in range(rounds):
                for side, tree in (("base", base), ("head", ROOT)):
                    got = measure(tree=tree)
                    if isinstance(got, str):
                        failed = f"{side}: {got}"
                        continue
                    figures[side].append(got)
            if failed or not figures["base"] or not figures["head"]:
                print(f"{name:<22}not measured: {failed}")
                continue
            compared = Compared(name, tuple(figures["base"]), tuple(figures["head"]))
            out.append(compared)
            print(compared.line())
    worse = [c.name for c in out if c.verdict == "WORSE"]
    print(
        "  "
        + (f"WORSE beyond noise: {', '.join(worse)}" if worse else "nothing worse beyond noise")
    )
    return out

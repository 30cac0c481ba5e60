"""Regenerates the reports shown in docs/audit.md from real runs: examples/audit_sharding.py
under both partitioners with examples/sharding.toml, and `shardy-convert diff` of their JSON
(and of a Shardy run with torch_xla handing StableHLO, `--stablehlo`).

    .venv-torch/bin/python examples/make_audit_doc.py          # rewrite docs/audit.md
    .venv-torch/bin/python examples/make_audit_doc.py --check  # exit 1 if it is stale

Each generated block sits between `<!-- BEGIN generated: KEY -->` and `<!-- END generated -->`
in the page; the text around them is written by hand.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "audit.md"
POLICY = "examples/sharding.toml"
BLOCK = re.compile(r"(<!-- BEGIN generated: (\S+) -->\n)(.*?)(<!-- END generated -->)", re.S)


def _run(command: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    for name in ("PJRT_DEVICE", "XLA_STABLEHLO_COMPILE", "CPU_NUM_DEVICES"):
        env.pop(name, None)
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)


def blocks(work: Path) -> dict[str, str]:
    """Each generated block's text: the command as a user types it, its output, its exit
    status when not 0."""
    out = {"policy": (ROOT / POLICY).read_text()}
    # Shardy a second time with torch_xla handing StableHLO (use_plugin(stablehlo_compile=True)):
    # only its diff is shown
    for run, extra in (("gspmd", []), ("shardy", []), ("stablehlo", ["--stablehlo"])):
        partitioner = "gspmd" if run == "gspmd" else "shardy"
        args = [partitioner, *extra, "--policy", POLICY, "--json", f"{run}.json"]
        shown = "python examples/audit_sharding.py " + " ".join(args)
        args[-1] = str(work / f"{run}.json")
        done = _run([sys.executable, "examples/audit_sharding.py", *args])
        if done.returncode not in (0, 1) or not done.stdout:
            raise SystemExit(f"{shown} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        out[run] = f"$ {shown}\n{done.stdout}{_status(done.returncode)}"
    for key, other in (("diff", "shardy"), ("diff-stablehlo", "stablehlo")):
        reports = [str(work / f"{p}.json") for p in ("gspmd", other)]
        done = _run([sys.executable, "-m", "shardy_convert", "diff", *reports])
        shown = f"$ shardy-convert diff gspmd.json {other}.json"
        out[key] = f"{shown}\n{done.stdout}{_status(done.returncode)}"
    return out


def _status(code: int) -> str:
    return f"(exit status {code})\n" if code else ""


def render(page: str, texts: dict[str, str]) -> str:
    def replace(m: re.Match) -> str:
        key = m.group(2)
        if key not in texts:
            raise SystemExit(f"{PAGE}: no generator for block {key!r}")
        lang = "toml" if key == "policy" else "text"
        return f"{m.group(1)}```{lang}\n{texts[key]}```\n{m.group(4)}"

    return BLOCK.sub(replace, page)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args()
    page = PAGE.read_text()
    with tempfile.TemporaryDirectory() as work:
        fresh = render(page, blocks(Path(work)))
    if args.check:
        if fresh != page:
            sys.exit(f"{PAGE} is stale: run examples/make_audit_doc.py")
        return
    PAGE.write_text(fresh)


if __name__ == "__main__":
    main()

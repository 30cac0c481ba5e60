"""The examples of README.md and docs/*.md, read and run as a user would: `tests/test_readme.py`
runs those that need nothing but `make install`, `e2e/test_docs.py` those marked as needing
torch_xla.

A ```console block is commands (`$ ` lines; a line ending in `\\` goes on on the next), each
followed by the output it shows. A ```python block is a program, or `>>>` lines run as a
doctest. The HTML comment on the line before a block says how it is run:

    (none)                                    run here, after `make install`
    <!-- run with torch_xla -->               run by e2e/test_docs.py, in the torch venv
    <!-- run with torch_xla: save as F.py --> (python) written to F.py for the blocks after it
    <!-- not run: REASON -->                  not run; REASON says why (a test it names,
                                              PATH::NAME, must exist)

Blocks inside a generated part of a page (`<!-- BEGIN generated: KEY -->`: signatures, help
texts, written by docs/make_reference.py) are the code's own text, no examples: not run.

Shown output is matched line by line, in order, against what the command writes to stdout
and stderr (each stream keeps its order; lines the page leaves out may stand between). `…` or
`...` in a shown line matches any text; a line that is only `…` stands for lines left out.
The output shown is jaxlib SHOWN_ON's, what `make install` gives: under another jaxlib (`make
test-oldest`) the commands run and must succeed or fail as shown, and their output is not
compared (XLA's cost figures, Shardy's mesh attributes and the version lines differ between
releases). `$ make TARGET` lines are not run (the tests run in what `make install` made): the
target must exist. `$ cat FILE` of a file nothing made shows that file whole: it is written as
shown.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
GENERATED = re.compile(r"<!-- BEGIN generated: \S+ -->\n.*?<!-- END generated -->", re.S)
MARKER = re.compile(r"<!-- (not run: .+?|run with torch_xla(?:: save as \S+)?) -->\n\Z")
NAMED_TEST = re.compile(r"\b((?:e2e|tests)/[\w/]+\.py)::(\w+)")
ELLIPSIS = re.compile(r"\.\.\.|…")
# What a block that needs torch_xla has in it: an import of torch, the torch venv.
NEEDS_TORCH = re.compile(r"^\s*(import|from) torch|\.venv-torch/", re.M)
# The jaxlib whose output the pages show: the one `make install` gives (on Python 3.11).
SHOWN_ON = "0.10.2"
# The tree a command sees in its working directory, as in a clone.
LINKED = ("testdata", "examples", "Makefile")


@dataclass
class Command:
    line: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Block:
    page: Path
    lineno: int
    lang: str
    text: str
    marker: str  # "", "not run: ...", "run with torch_xla[: save as F]", "generated"

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.lineno}"

    @property
    def torch(self) -> bool:
        return self.marker.startswith("run with torch_xla")

    @property
    def save_as(self) -> str | None:
        m = re.search(r"save as (\S+)", self.marker)
        return m.group(1) if m else None

    def commands(self) -> list[Command]:
        joined = re.sub(r"\\\n\s*", " ", self.text)
        commands: list[Command] = []
        for line in joined.splitlines():
            if line.startswith("$ "):
                commands.append(Command(line[2:]))
            elif commands:
                commands[-1].shown.append(line)
        return commands


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    generated = [m.span() for m in GENERATED.finditer(text)]
    found = []
    for m in FENCE.finditer(text):
        before = text[: m.start()]
        marker = MARKER.search(before)
        how = marker.group(1) if marker else ""
        if any(start < m.start() < end for start, end in generated):
            how = "generated"
        found.append(Block(page, before.count("\n") + 1, m.group(1), m.group(2), how))
    return found


def all_blocks(lang: str) -> list[Block]:
    return [b for page in PAGES for b in blocks(page) if b.lang == lang]


def problems(block: Block) -> list[str]:
    """What is wrong with how a python or console block says it is run."""
    found = []
    if block.marker == "generated":
        return found
    if block.marker.startswith("not run:"):
        reason = block.marker[len("not run:") :].strip()
        for path, test in NAMED_TEST.findall(reason):
            source = ROOT / path
            if not source.is_file() or f"def {test}(" not in source.read_text():
                found.append(f"{block.name}: names {path}::{test}, which does not exist")
        if NEEDS_TORCH.search(block.text) and not NAMED_TEST.search(reason):
            found.append(f"{block.name}: needs torch_xla: name the test that covers it")
    elif not block.torch and NEEDS_TORCH.search(block.text):
        found.append(f"{block.name}: needs torch_xla: mark it `run with torch_xla` or `not run`")
    if block.save_as and block.lang != "python":
        found.append(f"{block.name}: only a python block is saved as a file")
    return found


def workdir(tmp: Path, venv: Path = Path(sys.prefix)) -> Path:
    """A working directory like a clone's: testdata/, examples/ and the Makefile linked,
    `.venv` and `.venv-torch` the venv the tests run in."""
    for name in LINKED:
        (tmp / name).symlink_to(ROOT / name)
    for name in (".venv", ".venv-torch"):
        (tmp / name).symlink_to(venv)
    return tmp


def environment() -> dict[str, str]:
    """A user's environment: this tree's package first; none of the suite's own settings."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("XLA_FLAGS", "TF_CPP_MIN_LOG_LEVEL", "PJRT_DEVICE", "CPU_NUM_DEVICES"):
        env.pop(name, None)
    # pytest-xdist's worker variables: a page's own pytest run would take itself for a worker
    # (syrupy then keeps its snapshot report to itself)
    for name in [n for n in env if n.startswith("PYTEST_XDIST_") or n == "PYTEST_CURRENT_TEST"]:
        env.pop(name)
    return env


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z0-9_.-]+):.*## ", text, re.M))


def run_console(
    block: Block, cwd: Path, timeout: float = 600, lines: bool | None = None
) -> list[str]:
    """Runs each command of the block in `cwd` with bash; returns what differs from what the
    page shows (empty when everything matches). `lines`: compare the output shown (default:
    under jaxlib SHOWN_ON)."""
    if lines is None:
        import jaxlib

        lines = jaxlib.__version__ == SHOWN_ON
    failures = []
    for command in block.commands():
        words = shlex.split(command.line, comments=True)
        if words[0] == "make":
            missing = [t for t in words[1:] if t not in make_targets()]
            failures += [f"$ {command.line}: no make target {t}" for t in missing]
            continue
        if words[0] == "cat" and len(words) == 2 and not (cwd / words[1]).exists():
            (cwd / words[1]).write_text("\n".join(command.shown) + "\n")
            continue
        done = subprocess.run(
            ["bash", "-c", command.line],
            cwd=cwd,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        failures += _compare(command, done, lines)
    return failures


def _compare(command: Command, done: subprocess.CompletedProcess, lines: bool) -> list[str]:
    """What differs: the lines shown (when `lines`), the exit status."""
    streams = [done.stdout.splitlines(), done.stderr.splitlines()]
    at = [0, 0]
    for shown in command.shown if lines else []:
        if not shown.strip() or ELLIPSIS.fullmatch(shown.strip()):
            continue
        pattern = re.compile(".*".join(re.escape(p) for p in ELLIPSIS.split(shown.rstrip())))
        for k, lines in enumerate(streams):
            hit = next(
                (i for i in range(at[k], len(lines)) if pattern.fullmatch(lines[i].rstrip())),
                None,
            )
            if hit is not None:
                at[k] = hit + 1
                break
        else:
            return [_mismatch(command, done, f"shown line not in its output: {shown!r}")]
    failed_as_shown = any("error" in s.lower() or "DIFFERENT" in s for s in command.shown)
    if done.returncode != 0 and not failed_as_shown:
        return [_mismatch(command, done, f"exit status {done.returncode}")]
    return []


def _mismatch(command: Command, done: subprocess.CompletedProcess, what: str) -> str:
    return (
        f"$ {command.line}\n{what}\n--- stdout:\n{done.stdout[-3000:]}\n"
        f"--- stderr:\n{done.stderr[-3000:]}"
    )


def run_python(block: Block, cwd: Path, python: str = sys.executable) -> str:
    """Runs a python block (a `>>>` block as a doctest) in `cwd`; '' or what went wrong."""
    if block.save_as:
        (cwd / block.save_as).write_text(block.text)
        return ""
    if block.text.lstrip().startswith(">>>"):
        program = (
            "import doctest, sys\n"
            f"test = doctest.DocTestParser().get_doctest({block.text!r}, {{}}, "
            f"{block.name!r}, None, 0)\n"
            "runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)\nrunner.run(test)\n"
            "sys.exit(1 if runner.failures else 0)\n"
        )
    else:
        program = block.text
    done = subprocess.run(
        [python, "-c", program],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        return f"{block.name}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return ""

"""The examples of README.md and docs/ run as shown (tests/docs_examples.py says how a page
marks them): every console block's commands run against a clone's testdata/ and examples/ and
their shown output matches; every python block runs; a block that cannot run here says why,
and one that needs torch_xla is run by e2e/test_docs.py or names the test that covers it.
Every input file an example reads is shipped (issue 19: `changed.mlir`, `dot.mlir`,
`uneven.mlir`, `mlp.mlir` were nowhere), or made by an earlier line of the same example."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from .docs_examples import (
    PAGES,
    ROOT,
    SHOWN_ON,
    Block,
    all_blocks,
    problems,
    run_console,
    run_python,
    workdir,
)

INPUT = re.compile(r"\.(mlir|mlirbc|dump|pb|so|txt|json|py|0)$")
CONSOLE = all_blocks("console")
PYTHON = all_blocks("python")
HERE = [b for b in CONSOLE if not b.torch and not b.marker]
# Commands that compile programs on CPU devices: left out by `make quick`, as the compile
# proofs are.
COMPILES = re.compile(r"shardy-convert check|hook_on_pjrt_clients")


def _named_inputs(commands: list[str]) -> list[str]:
    """The files the commands read that no earlier command of the block made or showed.
    Not files: `NAME=value` words (environment, pip specs; a value is what the command makes,
    torch_xla's dump `run.dump.0` of `XLA_SAVE_TENSORS_FILE=run.dump`), `/path/...`
    placeholders, and the user's own program (`python train.py`, no folder, saved by an
    earlier block of the page)."""
    made: set[str] = set()
    needed = []
    for command in commands:
        words = shlex.split(command, comments=True)
        for k, word in enumerate(words):
            before = words[k - 1] if k else ""
            if before in (">", ">>", "2>", "-o") or words[0] == "cat":
                made.add(word.rstrip(";"))  # `> out.txt; echo $?`
            elif "=" in word:
                made.add(word.split("=", 1)[1])
            elif before.endswith("python") and "/" not in word:
                continue  # the user's program
            elif INPUT.search(word) and not word.startswith(("/path/", "-")) and "…" not in word:
                if not any(word.startswith(m) for m in made if m):
                    needed.append(word)
    return needed


def _examples() -> list[tuple[str, list[str]]]:
    """(where, commands) of each example: a console block, or all the blocks of a page that
    e2e/test_docs.py runs in one directory, in order (a file one makes, another reads)."""
    examples, by_page = [], {}
    for block in CONSOLE:
        commands = [c.line for c in block.commands()]
        if block.torch:
            by_page.setdefault(block.page, (block.name, []))[1].extend(commands)
        else:
            examples.append((block.name, commands))
    return examples + list(by_page.values())


def test_every_file_an_example_reads_is_shipped():
    missing = [
        f"{where}: {name}"
        for where, commands in _examples()
        for name in _named_inputs(commands)
        if not (ROOT / name).exists()
    ]
    assert not missing, missing


def test_the_pages_have_examples_to_run():
    assert len(PAGES) >= 10, PAGES
    assert len(HERE) >= 15, [b.name for b in HERE]


def test_the_output_shown_is_compared_in_make_installs_venv():
    # The pages show jaxlib SHOWN_ON's output and other jaxlibs' is not compared: when `make
    # install` gets another one, the docs' outputs must be checked again, not go unchecked.
    import jaxlib

    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("not the venv `make install` makes")
    assert jaxlib.__version__ == SHOWN_ON, "update the pages' outputs, then SHOWN_ON"


def test_every_block_is_run_or_says_why():
    found = [p for block in CONSOLE + PYTHON for p in problems(block)]
    assert not found, "\n".join(found)


def _param(block):
    marks = [pytest.mark.slow] if COMPILES.search(block.text) else []
    return pytest.param(block, id=block.name, marks=marks)


@pytest.mark.parametrize("block", [_param(b) for b in HERE])
def test_console_example(block, tmp_path):
    failures = run_console(block, workdir(tmp_path))
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.name) for b in PYTHON if not b.torch and not b.marker]
)
def test_python_example(block, tmp_path):
    failure = run_python(block, workdir(tmp_path))
    assert not failure, failure


def _block(text: str, lang: str = "console") -> Block:
    return Block(ROOT / "docs" / "example.md", 1, lang, text, "")


@pytest.mark.parametrize(
    ("text", "fails"),
    [
        ("$ echo hello world\nhello world\n", False),
        ("$ echo hello world\nhello …\n", False),  # … stands for text left out
        ("$ printf 'a\\nb\\nc\\n'\na\n…\nc\n", False),
        ("$ printf 'a\\nb\\n'\nb\na\n", True),  # shown out of order
        ("$ echo hello world\nhello there\n", True),
        ("$ echo to stderr >&2\nto stderr\n", False),
        ("$ false\n", True),  # fails where the page shows no failure
        ("$ echo 'x: error: bad'; exit 1\nx: error: bad\n", False),
        ("$ make no-such-target\n", True),
        ("$ make docs\n", False),
    ],
)
def test_shown_output_must_match(text, fails, tmp_path):
    assert bool(run_console(_block(text), tmp_path, lines=True)) is fails


def test_a_cat_of_a_shown_file_writes_it(tmp_path):
    block = _block("$ cat m.txt\nline 1\n$ wc -l m.txt\n1 m.txt\n")
    assert run_console(block, tmp_path, lines=True) == []
    assert (tmp_path / "m.txt").read_text() == "line 1\n"


def test_a_python_example_that_fails_is_reported(tmp_path):
    assert "exit 3" in run_python(_block("raise SystemExit(3)", "python"), tmp_path)
    assert run_python(_block(">>> 1 + 1\n2\n", "python"), tmp_path) == ""
    assert "exit 1" in run_python(_block(">>> 1 + 1\n3\n", "python"), tmp_path)

"""The README's command examples run on files a fresh clone has (issue 19: `changed.mlir`,
`dot.mlir`, `uneven.mlir`, `mlp.mlir` were nowhere): every input file a `$ ...` line names is
shipped, or made by an earlier line of the same example (`> v2.mlir`, `-o out/`), or shown
whole by `cat` there."""

from __future__ import annotations

import re
import shlex

from tests.conftest import TESTDATA

ROOT = TESTDATA.parent
INPUT = re.compile(r"\.(mlir|mlirbc|dump|pb|so|txt|json|py|0)$")


def _console_blocks(text: str) -> list[list[str]]:
    """The commands of each ```console block (a line ending in `\\` goes on on the next)."""
    blocks = re.findall(r"```console\n(.*?)```", text, re.S)
    joined = [re.sub(r"\\\n\s*", " ", b) for b in blocks]
    return [[line[2:] for line in b.splitlines() if line.startswith("$ ")] for b in joined]


def _named_inputs(commands: list[str]) -> list[str]:
    """The files the commands read that no earlier command of the block made or showed.
    Not files: `NAME=value` words (environment, pip specs; a value is what the command makes,
    torch_xla's dump `run.dump.0` of `XLA_SAVE_TENSORS_FILE=run.dump`), `/path/...`
    placeholders, and the user's own program (`python train.py`, no folder)."""
    made: set[str] = set()
    needed = []
    for command in commands:
        words = shlex.split(command.split(" #")[0])
        for k, word in enumerate(words):
            before = words[k - 1] if k else ""
            if before in (">", ">>", "2>", "-o") or words[0] == "cat":
                made.add(word.rstrip(";"))  # `> out.txt; echo $?`
            elif "=" in word:
                made.add(word.split("=", 1)[1])
            elif before == "python" and "/" not in word:
                continue  # the user's program
            elif INPUT.search(word) and not word.startswith(("/path/", "-")) and "…" not in word:
                if not any(word.startswith(m) for m in made if m):
                    needed.append(word)
    return needed


def test_every_file_an_example_reads_is_shipped():
    readme = (ROOT / "README.md").read_text()
    missing = [
        name
        for block in _console_blocks(readme)
        for name in _named_inputs(block)
        if not (ROOT / name).exists()
    ]
    assert not missing, missing

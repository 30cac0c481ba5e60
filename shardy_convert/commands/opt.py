"""`opt`: a chosen pipeline on one module, like mlir-opt / sdy_opt, without click.

The input is read once; a torch_xla dump is refused (opt runs on one module; convert runs on
dumps). With `split`, the module text is cut into cases at `// -----` lines (mlir-opt's
`--split-input-file`), each run on its own: a case that fails is reported and the next still
runs. Results go to stdout as each case finishes (cases separated by `// -----`), or to the
output file, written whole and only when every case passed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

from ..converter import run_passes
from ..errors import ShardyConvertError, ShardyConvertWarning, naming_flag, plural
from ..formats.dump import as_text, read
from .batch import STDIN, read_input, refuse_terminal, write

SPLIT_MARKER = "// -----"


def opt(
    input: str,
    steps,
    *,
    output: str | None = None,
    split: bool = False,
) -> Iterator[ShardyConvertError]:
    """Runs `steps` (a parsed pipeline, `passes.pipeline.parse`) on the module of `input` (a
    file or `-`) and writes the result (see the module docstring); yields each case's error,
    as it happens. Raises ShardyConvertError when the input cannot be read or is a dump."""
    data = read_input(input)
    text = as_text(data)
    refuse_terminal(output, "bytecode" if text is None else None)  # the input's form
    check_one_module(text, input)
    target = None if output in (None, STDIN) else Path(output)
    cases = split_input(text) if split and text is not None else [text or data]
    results, failures = [], 0
    for k, case in enumerate(cases):
        if k and target is None:
            write(f"{SPLIT_MARKER}\n", None)
        try:
            result = _warnings_named(input, run_passes, case, steps)
        except ShardyConvertError as e:  # reported; the next case still runs (like mlir-opt)
            failures += 1
            yield e
            continue
        if target is None:
            write(result, None)  # all of it, or BrokenPipeError
        results.append(result)
    if target is not None and not failures:
        write(results[0] if len(results) == 1 else f"{SPLIT_MARKER}\n".join(results), target)


def split_input(text: str) -> list[str]:
    """Splits a file into cases at `// -----` lines (mlir-opt's --split-input-file). Each case
    is padded with empty lines so error locations keep the file's line numbers."""
    cases: list[str] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == SPLIT_MARKER:
            cases.append("\n" * start + "".join(current))
            current, start = [], number + 1
            continue
        current.append(line)
    cases.append("\n" * start + "".join(current))
    return cases


def check_one_module(text: str | None, file: str) -> None:
    """opt runs on one module, as mlir-opt does: a dump is refused, saying so."""
    source = None if text is None else read(text, file)  # a malformed dump: located error
    if source is None or not source.is_dump:
        return
    count = len(source.graphs)
    raise ShardyConvertError(
        f"a torch_xla dump ({plural(count, 'graph')}): opt runs on one module "
        "(convert runs on dumps)",
        file=file,
    )


def _warnings_named(file: str, fn, *args):
    """`fn(*args)`, its ShardyConvertWarnings located in `file` (as convert prints them)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ShardyConvertWarning)
            return fn(*args)
    finally:  # passed on once recording has stopped
        for w in caught:
            message = naming_flag(w.message, "--num-devices N")
            if isinstance(message, ShardyConvertWarning):  # ours: located in the file
                message = message.located(file=file)
            warnings.warn(message, stacklevel=2)

"""Which files of a directory argument are inputs, for every command that takes directories.

- An XLA dump directory (`--xla_dump_to`: files `module_NNNN.NAME.before_optimizations.txt`
  or `.hlo.pb` in it; the argument or any folder below it): each module once, as XLA was
  handed it, the HLO text (`*.before_optimizations.txt`), else its HloProto
  (`*.before_optimizations.hlo.pb`). The rest is skipped and said so: optimized
  (partitioned) modules, buffer assignments, reports, `debug_options`, code generation, and
  JAX's `module_NNNN.NAME/module.mlir` copy of the same program.
- Any other folder: files named `*.mlir`, `*.mlirbc`, `*.dump`, `*.stablehlo`, `*.txt`,
  and `*.pb` files that hold an HLO module proto (read to tell; other protos, compile options
  and the like, are skipped and said so).

An HLO input's output is MLIR: under `-o DIR` its last suffix becomes `.mlir` (`x.hlo.pb` ->
`x.hlo.mlir`, beside an `x.mlir`; `module_0001.jit_f.before_optimizations.txt` ->
`...before_optimizations.mlir`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..formats import hlo

SUFFIXES = (".mlir", ".mlirbc", ".dump", ".stablehlo", ".txt", ".pb")
_XLA_PROGRAM = re.compile(r"^module_\d+\..*\.before_optimizations\.(txt|hlo\.pb)$")
_HLO_SUFFIX = re.compile(r"\.(pb|txt)$")


def inputs(path: Path) -> tuple[list[tuple[Path, Path]], list[str]]:
    """(file, relative output path) of each input under `path`, and notes on what was
    skipped (an XLA dump directory anywhere in the tree is read by its own rule)."""
    files = sorted(p for p in path.rglob("*") if p.is_file())
    dumps = {f.parent for f in files if _XLA_PROGRAM.match(f.name)}
    chosen, notes = [], []
    for folder in sorted(dumps):
        inside = [f for f in files if _dump_of(f, dumps) == folder]
        found, note = _xla_dump(path, folder, inside)
        chosen += found
        notes.append(note)
    skipped = []
    for f in files:
        if f.suffix not in SUFFIXES or _dump_of(f, dumps) is not None:
            continue
        form = _hlo_form(f)
        if f.suffix == ".pb" and form is None:
            skipped.append(f)
            continue
        chosen.append((f, _output(f.relative_to(path), form)))
    if skipped:
        notes.append(
            f"skipped {_count(skipped, 'file')} that hold no HLO module proto: "
            + _names(skipped, path)
        )
    return sorted(chosen), notes


def _dump_of(f: Path, dumps: set[Path]) -> Path | None:
    """The XLA dump directory `f` is part of: its folder, or the folder of its `module_NNNN.*`
    subfolder (JAX's `module.mlir`, compile options); None for any other file."""
    if f.parent in dumps:
        return f.parent
    if f.parent.parent in dumps and f.parent.name.startswith("module_"):
        return f.parent.parent
    return None


def _xla_dump(root: Path, folder: Path, files: list[Path]) -> tuple[list, str]:
    programs = [f for f in files if _XLA_PROGRAM.match(f.name)]
    texts = {f.name.removesuffix(".txt") for f in programs if f.name.endswith(".txt")}
    chosen = [
        f for f in programs if f.name.endswith(".txt") or f.name[: -len(".hlo.pb")] not in texts
    ]
    where = "" if folder == root else f" {folder.relative_to(root)}"
    note = (
        f"an XLA dump directory{where} (--xla_dump_to): {_count(chosen, 'module')} as XLA was "
        "handed them (*.before_optimizations.txt, else .hlo.pb); "
        f"{_count(range(len(files) - len(chosen)), 'other file')} skipped (optimized modules, "
        "buffer assignments, reports, debug options, code generation, JAX's module.mlir copies)"
    )
    return [(f, _output(f.relative_to(root), hlo.TEXT)) for f in chosen], note


def _hlo_form(f: Path) -> str | None:
    """The HLO form of a `.txt` or `.pb` file (read to tell), else None."""
    if f.suffix not in (".txt", ".pb"):
        return None
    try:
        with f.open("rb") as stream:
            data = stream.read() if f.suffix == ".pb" else stream.read(4096)
    except OSError:
        return None  # reported, located, when the file is read as an input
    return hlo.kind(data)


def _output(rel: Path, form: str | None) -> Path:
    if form is None:
        return rel
    return rel.with_name(_HLO_SUFFIX.sub("", rel.name) + ".mlir")


def _count(items, noun: str) -> str:
    n = len(items)
    return f"{n} {noun}{'s' * (n != 1)}"


def _names(files: list[Path], root: Path, limit: int = 3) -> str:
    shown = ", ".join(str(f.relative_to(root)) for f in files[:limit])
    return shown + (f", ... ({len(files) - limit} more)" if len(files) > limit else "")

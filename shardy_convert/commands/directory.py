"""Which files of a directory argument are inputs, for every command that takes directories.

- An XLA dump directory (`--xla_dump_to`: files `module_NNNN.NAME.before_optimizations.txt`
  or `.hlo.pb` in it): each module once, as XLA was handed it, the HLO text
  (`*.before_optimizations.txt`), else its HloProto (`*.before_optimizations.hlo.pb`). The
  rest is skipped and said so: optimized (partitioned) modules, buffer assignments, reports,
  `debug_options`, code generation, and JAX's `module_NNNN.NAME/module.mlir` copy of the same
  program.
- Any other directory: files named `*.mlir`, `*.mlirbc`, `*.dump`, `*.stablehlo`, `*.txt`,
  and `*.pb` files that hold an HLO module proto (read to tell; other protos, compile options
  and the like, are skipped and said so).

An HLO input's output is MLIR: under `-o DIR` it is written as `NAME.mlir` (`x.hlo.pb` ->
`x.mlir`, `module_0001.jit_f.before_optimizations.txt` -> `...before_optimizations.mlir`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..formats import hlo

SUFFIXES = (".mlir", ".mlirbc", ".dump", ".stablehlo", ".txt", ".pb")
_XLA_PROGRAM = re.compile(r"^module_\d+\..*\.before_optimizations\.(txt|hlo\.pb)$")
_HLO_SUFFIX = re.compile(r"(\.hlo)?\.(pb|txt)$")


def inputs(path: Path) -> tuple[list[tuple[Path, Path]], str | None]:
    """(file, relative output path) of each input under `path`, and a note on what was
    skipped (None when nothing worth saying was)."""
    files = sorted(p for p in path.rglob("*") if p.is_file())
    programs = [f for f in files if _XLA_PROGRAM.match(f.name)]
    if programs:
        return _xla_dump(path, files, programs)
    chosen, skipped = [], []
    for f in (f for f in files if f.suffix in SUFFIXES):
        form = _hlo_form(f)
        if f.suffix == ".pb" and form is None:
            skipped.append(f)
            continue
        chosen.append((f, _output(f.relative_to(path), form)))
    note = None
    if skipped:
        note = f"skipped {_count(skipped, 'file')} that hold no HLO module proto: " + _names(
            skipped, path
        )
    return chosen, note


def _xla_dump(path: Path, files: list[Path], programs: list[Path]) -> tuple[list, str]:
    texts = {f.name.removesuffix(".txt") for f in programs if f.name.endswith(".txt")}
    chosen = [
        f for f in programs if f.name.endswith(".txt") or f.name[: -len(".hlo.pb")] not in texts
    ]
    skipped = len(files) - len(chosen)
    note = (
        f"an XLA dump directory (--xla_dump_to): {_count(chosen, 'module')} as XLA was handed "
        "them (*.before_optimizations.txt, else .hlo.pb); "
        f"{_count(range(skipped), 'other file')} skipped (optimized modules, buffer "
        "assignments, reports, debug options, code generation, JAX's module.mlir copies)"
    )
    return [(f, _output(f.relative_to(path), hlo.TEXT)) for f in chosen], note


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

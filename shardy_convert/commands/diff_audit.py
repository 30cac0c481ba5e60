"""`diff` of two sharding audit reports (formats/audit.py's JSON): by name, which tensors
compiled to other shardings.

The typical pair is one program audited twice, on torch_xla's built-in runtime (GSPMD) and
through `use_plugin` (Shardy). Shardings compare as placements (`""` equals `{replicated}`,
a V1 list equals its V2 iota: sharding/model.py), so only a tensor that another device
holds another slice of differs. A tensor in one report only, or with another shape, differs
too; what the mark was is compared the same way, since a program marks the same in both runs.
"""

from __future__ import annotations

from ..errors import ShardyConvertError
from ..formats.audit import TensorRow, from_json
from ..sharding import HloSharding, parse
from .diff import Comparison, Difference


def diff_reports(a: str | bytes, b: str | bytes, names: tuple[str, str] = ("A", "B")) -> Comparison:
    """Compares two audit reports tensor by tensor (A's order, then B's own tensors)."""
    first, second = from_json(a, names[0]), from_json(b, names[1])
    theirs = {row.name: row for row in second.tensors}
    result = Comparison()
    for row in first.tensors:
        other = theirs.pop(row.name, None)
        if other is None:
            result.differences.append(Difference(row.name, _placed(row), "no such tensor"))
            continue
        found = _differences(row, other, names)
        result.differences += found
        result.placements += not found
    for row in theirs.values():
        result.differences.append(Difference(row.name, "no such tensor", _placed(row)))
    return result


def _differences(a: TensorRow, b: TensorRow, names: tuple[str, str]) -> list[Difference]:
    if a.shape != b.shape:
        return [Difference(f"{a.name}: shape", _dims(a.shape), _dims(b.shape))]
    found = []
    for what, x, y in (("compiled", a.compiled, b.compiled), ("marked", a.marked, b.marked)):
        if not _same(_sharding(x, a, names[0]), _sharding(y, b, names[1])):
            spec_x, spec_y = _spec(a, what), _spec(b, what)
            found.append(Difference(f"{a.name}: {what}", _text(x, spec_x), _text(y, spec_y)))
    return found


def _sharding(hlo: str | None, row: TensorRow, file: str) -> HloSharding | None:
    if hlo is None:
        return None
    try:
        return parse(hlo)
    except ShardyConvertError as e:
        raise ShardyConvertError(f"{row.name}: {e.message}", file=file) from None


def _same(a: HloSharding | None, b: HloSharding | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (a.is_replicated and b.is_replicated)


def _spec(row: TensorRow, what: str):
    return row.compiled_spec if what == "compiled" else row.marked_spec


def _text(hlo: str | None, spec) -> str:
    """`('model', None) {devices=[4,1,2]...}`: the spec, then the HLO string it reads."""
    if hlo is None:
        return "none"
    if spec is not None and spec.is_replicated:
        return "replicated"
    return f"{spec} {hlo or '{replicated}'}" if spec is not None else hlo or "{replicated}"


def _placed(row: TensorRow) -> str:
    return _text(row.compiled, row.compiled_spec)


def _dims(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, shape)) + "]"

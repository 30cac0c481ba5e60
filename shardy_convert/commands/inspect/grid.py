"""`inspect --show NAME`: find one value and draw which devices hold each of its tiles."""

from __future__ import annotations

import numpy as np

from ...sharding import HloSharding, Kind, SubgroupType
from .report import GraphReport, InspectReport, Value
from .shards import dims_text, tile_devices


def find_value(
    report: InspectReport, name: str, graph: int | None = None
) -> tuple[GraphReport, Value]:
    """The value `name` (`%arg3`, `arg3`, `result 0`, `%1`, `@f:%arg0`) names.

    Raises LookupError listing the candidates when there is none or more than one.
    """
    func, key = _split_name(name)
    graphs = [g for g in report.graphs if graph is None or (g.graph or 0) == graph]
    hits = [(g, v) for g in graphs for v in g.values if _matches(v, func, key)]
    if len(hits) > 1 and func is None:
        hits = [(g, v) for g, v in hits if v.func == "main"] or hits
    if len({id(g) for g, _ in hits}) > 1:
        where = ", ".join(str(g.graph) for g, _ in hits[:20])
        raise LookupError(f'"{name}" is in graphs {where}: pick one with --graph N')
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise LookupError(f'"{name}" names {len(hits)} values: ' + _names(v for _, v in hits))
    known = _names(v for g in graphs for v in g.values)
    raise LookupError(f'no sharded value "{name}"' + (f"; values: {known}" if known else ""))


def _split_name(name: str) -> tuple[str | None, str]:
    if name.startswith("@") and ":" in name:
        func, _, rest = name[1:].partition(":")
        return func, _key(rest)
    return None, _key(name)


def _key(name: str) -> str:
    return name.strip().lstrip("%").replace(" ", "").lower()


def _matches(value: Value, func: str | None, key: str) -> bool:
    return _key(value.name) == key and (func is None or value.func == func)


def _names(values) -> str:
    names = list(dict.fromkeys(v.label for v in values))
    return ", ".join(names[:30]) + (", ..." if len(names) > 30 else "")


_BOX = dict(h="─", v="│", tl="┌", tm="┬", tr="┐", ml="├", mm="┼", mr="┤", bl="└", bm="┴", br="┘")
_ASCII = dict(h="-", v="|", tl="+", tm="+", tr="+", ml="+", mm="+", mr="+", bl="+", bm="+", br="+")
# More tiles than this across a terminal line: list the tiles instead of drawing them.
MAX_DRAWN_COLUMNS = 16


def show(graph: GraphReport, value: Value, *, ascii: bool = False) -> str:
    """Which devices hold each tile of `value`, like `jax.debug.visualize_sharding`.

    Rank <= 2: a grid, dim 0 down and dim 1 across, labelled with each tile's index range;
    each cell lists the devices holding that tile (a replication group when several, ids
    sorted: they carry no order). Rank > 2: one line per tile.
    """
    lines = [
        f"{value.label} of {graph.where}" + (f" at {value.location}" if value.location else "")
    ]
    lines += [f"  {k:<9}{v}" for k, v in _facts(value) if v]
    lines.append("")
    lines.extend(_picture(value, _ASCII if ascii else _BOX))
    return "\n".join(lines) + "\n"


def _facts(value: Value) -> list[tuple[str, str | None]]:
    v2 = value.v2 if value.v2 is not None else "none: no iota form (custom device order)"
    return [
        ("type", value.type),
        ("sharding", value.sharding),
        ("gspmd", value.gspmd if value.gspmd != value.sharding else None),
        ("v2", v2 if v2 != value.sharding else None),
        ("sdy", value.sdy if value.sdy != value.sharding else None),
        ("mesh", value.mesh),
        ("shard", value.shard.text if value.shard else None),
    ]


def _picture(value: Value, chars: dict) -> list[str]:
    s, shape = value.hlo, value.shape
    if s is None:
        return ["(no placement: the sharding could not be read)"]
    if s.kind is Kind.TILED and not s.is_replicated:
        if shape is None or len(shape) != len(s.data_dims) or None in shape:
            shape = s.data_dims  # no usable tensor shape: label tiles by index
        # no None in shape now (checked above)
        return [*_tiled_picture(s, tuple(shape), chars), _legend_tiled(s)]  # type: ignore[arg-type]
    devices = _whole_devices(s, value.num_devices)
    if devices is None:
        return [value.shard.text if value.shard else f"{s.kind.value}: no tiles to draw"]
    return [*_grid([""], [""], [[devices]], chars), _legend_whole(s, value)]


def _whole_devices(s: HloSharding, n: int | None) -> str | None:
    if s.kind is Kind.MAXIMAL:
        return str(s.device)
    if not s.is_replicated:
        return None
    return _ids(range(n)) if n else "all devices"


def _legend_whole(s: HloSharding, value: Value) -> str:
    what = dims_text(value.shape) if value.shape is not None else "the value"
    if s.kind is Kind.MAXIMAL:
        return f"device {s.device} holds the whole {what}"
    return f"replicated: every device holds the whole {what}"


def _tiled_picture(s: HloSharding, shape: tuple[int, ...], chars: dict) -> list[str]:
    """Dim 0 down, dim 1 across (rank 1: one row); a list of tiles for rank > 2."""
    groups = tile_devices(s)
    ranges = [[_range_text(r) for r in _ranges(n, d)] for n, d in zip(shape, s.data_dims)]
    rank = len(shape)
    if rank > 2 or (rank and len(ranges[-1]) > MAX_DRAWN_COLUMNS):
        return _tile_list(groups, ranges)
    if rank < 2:
        cols = ranges[0] if rank else [""]
        return _grid(cols, [""], [[_ids(g) for g in groups.reshape(-1, groups.shape[-1])]], chars)
    cells = [[_ids(groups[i, j]) for j in range(groups.shape[1])] for i in range(groups.shape[0])]
    return _grid(ranges[1], ranges[0], cells, chars)


def _legend_tiled(s: HloSharding) -> str:
    rank = len(s.data_dims)
    if rank > 2:
        text = "one line per tile: its index ranges and the devices that hold it"
    else:
        text = ("one tile", "dim 0 across", "dim 0 down, dim 1 across")[rank]
        text += "; each cell lists the devices that hold that tile"
    kinds = {t for t, n in zip(s.subgroups, s.tile_assignment.dims[len(s.data_dims) :]) if n > 1}
    if SubgroupType.REPLICATED in kinds:
        text += " (a replication group)"
    if SubgroupType.MANUAL in kinds:
        text += " (a manual group: each device has its own data)"
    return text


def _ranges(size: int, parts: int) -> list[tuple[int, int]]:
    """XLA's tiling: tile i covers [i*c, min((i+1)*c, size)) with c = ceil(size / parts)."""
    chunk = -(-size // parts)
    return [(min(i * chunk, size), min((i + 1) * chunk, size)) for i in range(parts)]


def _range_text(r: tuple[int, int]) -> str:
    return f"{r[0]}:{r[1]}" if r[1] > r[0] else "(padding)"


def _ids(ids) -> str:
    """`0,4` or, for runs of 3 or more, `0-3,8-11`."""
    ids = [int(i) for i in ids]
    parts, start = [], 0
    for k in range(1, len(ids) + 1):
        if k < len(ids) and ids[k] == ids[k - 1] + 1:
            continue
        run = ids[start:k]
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
        start = k
    return ",".join(parts)


def _grid(cols: list[str], rows: list[str], cells: list[list[str]], c: dict) -> list[str]:
    """A box grid: column labels on top, row labels on the left, centred cells."""
    width = max(len(x) for x in [*cols, *(cell for row in cells for cell in row)]) + 2
    pad = max(len(r) for r in rows)
    n = len(cols)

    def border(left: str, mid: str, right: str) -> str:
        return " " * pad + " " + left + mid.join([c["h"] * width] * n) + right

    lines = []
    if any(cols):
        lines.append(" " * (pad + 2) + " ".join(label.center(width) for label in cols).rstrip())
    lines.append(border(c["tl"], c["tm"], c["tr"]))
    for k, (label, row) in enumerate(zip(rows, cells)):
        if k:
            lines.append(border(c["ml"], c["mm"], c["mr"]))
        body = c["v"].join(cell.center(width) for cell in row)
        lines.append(f"{label.rjust(pad)} {c['v']}{body}{c['v']}")
    lines.append(border(c["bl"], c["bm"], c["br"]))
    return lines


def _tile_list(groups: np.ndarray, ranges: list[list[str]]) -> list[str]:
    lines = []
    for index in np.ndindex(*groups.shape[:-1]):
        where = ", ".join(ranges[d][i] for d, i in enumerate(index))
        lines.append(f"  tile {index!s:<12} [{where}]  devices {_ids(groups[index])}")
    return lines

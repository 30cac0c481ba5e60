"""The audit: findings about sharded values that are not in the import rules (those come from
`shardy_convert.sharding.import_rules`, as import-shardings checks them), in the spirit of "annotate
what you own". Pure: values and plans in, messages out."""

from __future__ import annotations

import math
import re

from ...sharding import Kind, import_rules
from ...sharding.mesh import MeshPlan, local_mesh
from .report import Diagnostic, GraphReport, Value

# Below either threshold a sharded tensor costs more in collectives than it saves in memory.
SMALL_ELEMENTS = 1024
SMALL_SHARD_BYTES = 64
# Where a graph's device count comes from when the graph itself says it.
_OWN_COUNT = ("shardings", "mhlo.num_partitions", "sdy.mesh")


def small_sharded(value: Value) -> str | None:
    """Why a sharded value is too small to shard, or None."""
    s, shard = value.hlo, value.shard
    if s is None or shard is None or shard.shape is None or shard.tiles < 2:
        return None
    elements = math.prod(value.shape)  # type: ignore[arg-type]  # known: its shard's is
    shard_bytes = math.prod(shard.shape) * element_bytes(value.dtype)
    if elements >= SMALL_ELEMENTS and shard_bytes >= SMALL_SHARD_BYTES:
        return None
    return (
        f"{elements} elements in {shard.tiles} tiles of {shard_bytes} bytes: a stream of tiny "
        "collectives; replicate it"
    )


def element_bytes(dtype: str | None) -> int:
    """Bytes per element (`f32` 4, `bf16` 2, `i1` 1, `complex<f32>` 8); 4 when unknown."""
    m = re.search(r"(\d+)", dtype or "")
    if m is None:
        return 4
    size = max(int(m.group(1)), 8) // 8
    return size * 2 if (dtype or "").startswith("complex") else size


def device_order(value: Value, plan: MeshPlan | None) -> tuple[str, str] | None:
    """(code, message) when a tiled V1/V2 sharding is one a V2-only path or XLA's importer
    mishandles: a device list with no iota form, or an iota form with no common
    factorization of tile and reshape dims; else None."""
    leaf = value.hlo
    if leaf is None or leaf.kind is not Kind.TILED or leaf.is_replicated:
        return None
    if value.v2 is None:
        return (
            "custom-device-order",
            f"device list {clip_ids(leaf.tile_assignment.device_list)} has no iota form: "
            "a V2-only path (torch_xla's CONVERT_SHLO_TO_SHARDY, XLA's importer) would lose "
            "this order; " + _kept_order(plan),
        )
    tiles = leaf.to_v2().tile_assignment
    if tiles.reshape is not None and len(tiles.reshape) > 1 and local_mesh(tiles) is None:
        return (
            "no-common-factorization",
            f"{tiles} has no common factorization of tile and reshape dims: XLA's importer "
            f"aborts on it; shardy-convert places it on mesh {value.mesh}",
        )
    return None


def _kept_order(plan: MeshPlan | None) -> str:
    if plan is None or plan.mesh.device_ids is None:
        return "shardy-convert relabels it onto the mesh order"
    return f"shardy-convert keeps it as device_ids={clip_ids(plan.mesh.device_ids)}"


def clip_ids(ids, limit: int = 16) -> str:
    ids = list(ids)
    return "[" + ",".join(map(str, ids[:limit])) + (",...]" if len(ids) > limit else "]")


def rule_findings(facts: import_rules.ModuleFacts, values: dict[int, list[Value]]) -> list:
    """The import rules' findings as inspect findings, each at the value it is about;
    `values` maps `id(placed)` to the values read from that sharding."""
    found = []
    for f in import_rules.check(facts):
        at: list[Value | None] = [*values.get(id(f.placed), ())] or [None]
        value = at[min(f.element or 0, len(at) - 1)]
        where = value.location if value is not None else None
        label = value.label if value is not None else None
        found.append(Diagnostic(f.severity, f.code, f.message, where, label))
    return found


def count_mismatch(file: str | None, graphs: list[GraphReport]) -> list[Diagnostic]:
    """One error when the graphs of a dump name different device counts."""
    own = [(g.graph, g.num_devices) for g in graphs if g.device_count_from in _OWN_COUNT]
    if len({n for _, n in own}) < 2:
        return []
    by_count: dict[int | None, list[str]] = {}
    for k, n in own:
        by_count.setdefault(n, []).append(str(k))
    said = "; ".join(
        f"{n} in graph{'s' * (len(ks) > 1)} {', '.join(ks)}" for n, ks in by_count.items()
    )
    return [
        Diagnostic(
            "error",
            "device-count-mismatch",
            f"the graphs of this dump disagree on the device count ({said}); one process "
            "runs them all on one set of devices",
            file=file,
        )
    ]

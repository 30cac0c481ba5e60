"""The report `inspect` returns: graphs of sharded values, findings and errors; JSON form."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import ShardyConvertError, place
from ...sharding import HloSharding

SCHEMA = "shardy-convert.inspect/1"
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Diagnostic:
    """One audit result; prints like a compiler diagnostic: `FILE:graph N:LOC: warning: ...`."""

    severity: str
    code: str
    message: str
    location: str | None = None
    value: str | None = None
    file: str | None = None
    graph: int | None = None

    def __str__(self) -> str:
        prefix = place(self.file, self.graph, self.location)
        what = f"{self.value}: " if self.value else ""
        head = f"{prefix}: " if prefix else ""
        return f"{head}{self.severity}: {what}{self.message} [{self.code}]"

    def as_json(self) -> dict:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "graph": self.graph,
            "location": self.location,
            "value": self.value,
        }


@dataclass(frozen=True)
class Shard:
    """What one device holds of a value: `8x16 -> 4x4 per device, 2 replicas`."""

    shape: tuple[int, ...] | None
    tiles: int
    devices_per_shard: int | None
    uneven: bool
    text: str

    def as_json(self) -> dict:
        shape = None if self.shape is None else list(self.shape)
        return {
            "shape": shape,
            "tiles": self.tiles,
            "devices_per_shard": self.devices_per_shard,
            "uneven": self.uneven,
            "text": self.text,
        }


@dataclass
class Value:
    """One sharded value (or one result of a tuple-sharded op)."""

    name: str
    func: str | None
    kind: str
    op: str | None
    location: str | None
    type: str | None
    shape: tuple[int | None, ...] | None
    dtype: str | None
    sharding: str
    gspmd: str | None = None
    v2: str | None = None
    sdy: str | None = None
    shard: Shard | None = None
    hlo: HloSharding | None = None
    num_devices: int | None = None
    mesh: str | None = None

    @property
    def label(self) -> str:
        """`%arg3`, or `@f %arg0` outside `@main`."""
        return self.name if self.func in (None, "main") else f"@{self.func} {self.name}"

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "func": self.func,
            "kind": self.kind,
            "op": self.op,
            "location": self.location,
            "type": self.type,
            "shape": None if self.shape is None else list(self.shape),
            "dtype": self.dtype,
            "sharding": self.sharding,
            "gspmd": self.gspmd,
            "v2": self.v2,
            "sdy": self.sdy,
            "shard": None if self.shard is None else self.shard.as_json(),
        }


@dataclass
class GraphReport:
    """One module: its mesh, its sharded values and its own findings."""

    file: str | None
    graph: int | None
    form: str = "gspmd"
    num_devices: int | None = None
    device_count_from: str | None = None
    meshes: list[tuple[str, str]] = field(default_factory=list)
    mesh_from: str | None = None  # the program's mesh @mesh is (a mesh file's), if one fits
    values: list[Value] = field(default_factory=list)
    findings: list[Diagnostic] = field(default_factory=list)

    @property
    def where(self) -> str:
        return place(self.file, self.graph) or "<module>"

    def as_json(self) -> dict:
        return {
            "file": self.file,
            "graph": self.graph,
            "form": self.form,
            "num_devices": self.num_devices,
            "device_count_from": self.device_count_from,
            "meshes": [{"name": n, "mesh": m} for n, m in self.meshes],
            "mesh_from": self.mesh_from,
            "values": [v.as_json() for v in self.values],
        }


@dataclass
class InspectReport:
    """Everything `inspect` found over its inputs, in input order."""

    graphs: list[GraphReport] = field(default_factory=list)
    findings: list[Diagnostic] = field(default_factory=list)
    errors: list[ShardyConvertError] = field(default_factory=list)

    def all_findings(self) -> list[Diagnostic]:
        """Graph findings in graph order, then the findings about whole files."""
        return [f for g in self.graphs for f in g.findings] + self.findings

    def as_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "graphs": [g.as_json() for g in self.graphs],
            "findings": [f.as_json() for f in self.all_findings()],
            "errors": [error_json(e) for e in self.errors],
        }


def line_col(finding: Diagnostic) -> tuple[int, int]:
    """Sort key: findings without a location first, then by `LINE:COL`."""
    m = re.match(r"(\d+):(\d+)", finding.location or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def error_json(e: ShardyConvertError) -> dict:
    return {"file": e.file, "graph": e.graph, "location": e.location, "message": e.message}

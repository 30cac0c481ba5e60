"""The rewrite passes of shardy-convert, one per module, and the registry that names them.

Each pass is a frozen dataclass with a kebab-case `NAME`, typed options and `run(module_op)`.
`pipeline.py` mixes them with Shardy's registered `sdy-*` passes on one
PassManager.
"""

from __future__ import annotations

from .export_shardings import ExportShardingsPass
from .import_custom_calls import ImportCustomCallsPass
from .import_round_trip import ImportRoundTripPass
from .import_shardings import ImportShardingsPass
from .inline_calls import InlineCallsPass
from .iota_mesh import IotaMeshPass
from .match_gspmd_boundary import MatchGspmdBoundaryPass
from .v1_to_v2 import V1ToV2Pass

PASSES = {
    p.NAME: p
    for p in (
        V1ToV2Pass,
        ImportShardingsPass,
        ImportCustomCallsPass,
        ExportShardingsPass,
        ImportRoundTripPass,
        InlineCallsPass,
        IotaMeshPass,
        MatchGspmdBoundaryPass,
    )
}

__all__ = [
    "PASSES",
    "ExportShardingsPass",
    "ImportCustomCallsPass",
    "ImportRoundTripPass",
    "ImportShardingsPass",
    "InlineCallsPass",
    "IotaMeshPass",
    "MatchGspmdBoundaryPass",
    "V1ToV2Pass",
]

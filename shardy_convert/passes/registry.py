"""The rewrite passes of shardy-convert, one per module, and the registry that names them.

Each pass is a frozen dataclass with a kebab-case `NAME`, typed options and `run(module_op)`.
`pipeline.py` mixes them with Shardy's registered `sdy-*` passes on one
PassManager.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

# Each pass's module and class under passes/, by name, in the order `list-passes` shows them.
# A pass's module is imported when a pipeline first names it (cold start: `convert` imports
# only the passes it runs, not v1-to-v2, export-shardings, match-gspmd-boundary ...).
_WHERE = {
    "v1-to-v2": "v1_to_v2:V1ToV2Pass",
    "lift-callee-shardings": "lift_callee_shardings:LiftCalleeShardingsPass",
    "pad-uneven": "pad_uneven:PadUnevenPass",
    "import-sharding-groups": "import_sharding_groups:ImportShardingGroupsPass",
    "import-shardings": "import_shardings:ImportShardingsPass",
    "import-custom-calls": "import_custom_calls:ImportCustomCallsPass",
    "export-shardings": "export_shardings:ExportShardingsPass",
    "import-round-trip": "import_round_trip:ImportRoundTripPass",
    "inline-calls": "inline_calls:InlineCallsPass",
    "iota-mesh": "iota_mesh:IotaMeshPass",
    "single-device-program": "single_device_program:SingleDeviceProgramPass",
    "match-gspmd-boundary": "match_gspmd_boundary:MatchGspmdBoundaryPass",
    "match-gspmd-propagation": "match_gspmd_propagation:MatchGspmdPropagationPass",
}


class _Passes(Mapping):
    """name -> pass class, each class imported on first use."""

    def __getitem__(self, name: str) -> type:
        module, attr = _WHERE[name].split(":")
        cls = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
        if cls.NAME != name:
            raise LookupError(f"registry: {attr}.NAME is {cls.NAME!r}, registered as {name!r}")
        return cls

    def __contains__(self, name: object) -> bool:  # without importing the pass
        return name in _WHERE

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


PASSES: Mapping[str, type] = _Passes()

__all__ = ["PASSES"]

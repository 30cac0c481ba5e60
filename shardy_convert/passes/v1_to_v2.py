"""v1-to-v2: explicit device lists become iota tile assignments, in place."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

from ..errors import ShardyConvertWarning, clip
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.walker import Site, transform_shardings
from ..sharding import HloSharding, Kind


@dataclass(frozen=True)
class V1ToV2Pass:
    """Rewrites every `mhlo.sharding` V1 device list that is a transpose of a reshaped arange
    into its V2 iota form (`{devices=[4,2]0,4,1,5,2,6,3,7}` -> `{devices=[4,2]<=[2,4]T(1,0)}`)
    on func arguments, results, ops, tuples and module attributes, and every named (V3) string
    into the V2 of the same placement (`{mesh['a'=2,'b'=4], [{'b'}, {}]}` -> `{devices=[4,1,2]
    <=[2,4]T(1,0) last_tile_dim_replicate}`; a max/min reduction as XLA's metadata entry). Lists
    with no iota form (custom device orders) stay or become V1 lists, with one warning that
    counts them and locates the first; so do V3 open dims, which V2 cannot say. The module
    stays GSPMD."""

    NAME: ClassVar[str] = "v1-to-v2"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        kept: list[Site] = []
        from_v3: list[Site] = []
        opened: list[Site] = []

        def to_v2(text: str, site: Site) -> str:
            sharding = site.parse()
            v2 = sharding.to_v2()
            named = [leaf.named for leaf in sharding.leaves() if leaf.named is not None]
            if _keeps_a_list(v2):
                (from_v3 if named else kept).append(site)
            if any(d.is_closed is False for n in named for d in n.dims or ()):
                opened.append(site)
            return text if v2 is sharding else str(v2)

        transform_shardings(module, to_v2)
        if kept:
            warnings.warn(_kept_warning(kept), stacklevel=2)
        for sites, what in ((from_v3, _FROM_V3), (opened, _OPENED)):
            if sites:
                warnings.warn(_counted(sites, what), stacklevel=2)


def _keeps_a_list(sharding: HloSharding) -> bool:
    """Whether `sharding` (after `to_v2`) still holds a V1 device list."""
    if sharding.kind is Kind.TUPLE:
        return any(_keeps_a_list(e) for e in sharding.elements)
    return sharding.kind is Kind.TILED and not sharding.tile_assignment.is_iota


# What a count of V3 shardings do on their way to V2: (one of them, several).
_FROM_V3 = (
    "has a device order with no V2 iota form (no transpose of a reshaped arange): a V1 list",
    "have a device order with no V2 iota form (no transpose of a reshaped arange): V1 lists",
)
_OPENED = (
    "has open dims (`?`), which V2 cannot say: they become closed",
    "have open dims (`?`), which V2 cannot say: they become closed",
)


def _counted(sites: list[Site], what: tuple[str, str]) -> ShardyConvertWarning:
    count = len(sites)
    which = "V3 sharding" if count == 1 else f"{count} V3 shardings"
    have = what[0] if count == 1 else what[1]
    first = "it is" if count == 1 else "the first is"
    return ShardyConvertWarning(
        f'{which} {have}; {first} "{clip(sites[0].text)}"', location=sites[0].location
    )


def _kept_warning(kept: list[Site]) -> ShardyConvertWarning:
    count = len(kept)
    lists = "V1 device list has" if count == 1 else f"{count} V1 device lists have"
    return ShardyConvertWarning(
        f"{lists} no V2 iota form (a custom device order: no transpose of a reshaped arange) "
        f'and stay V1; {"it is" if count == 1 else "the first is"} "{clip(kept[0].text)}"',
        location=kept[0].location,
    )

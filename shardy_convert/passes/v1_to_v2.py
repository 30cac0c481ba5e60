"""v1-to-v2: explicit device lists become iota tile assignments, in place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.bindings import ir
from ..ir.walker import Site, transform_shardings


@dataclass(frozen=True)
class V1ToV2Pass:
    """Rewrites every `mhlo.sharding` V1 device list that is a transpose of a reshaped arange
    into its V2 iota form (`{devices=[4,2]0,4,1,5,2,6,3,7}` -> `{devices=[4,2]<=[2,4]T(1,0)}`)
    on func arguments, results, ops, tuples and module attributes. Lists with no iota form
    (custom device orders) are left as they are; the module stays GSPMD."""

    NAME: ClassVar[str] = "v1-to-v2"

    def run(self, module: ir.Operation) -> None:
        transform_shardings(module, _to_v2)


def _to_v2(text: str, site: Site) -> str:
    sharding = site.parse()
    v2 = sharding.to_v2()
    return text if v2 is sharding else str(v2)

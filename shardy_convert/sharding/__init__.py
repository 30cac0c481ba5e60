"""The GSPMD sharding algebra: parse (`gspmd/`: V1, V2 and named V3 text), print, V1 -> V2,
semantic equality, named (V3) shardings (`named`), Shardy's plain forms, meshes and the import
rules. Pure Python + numpy, no MLIR, no jax. May use: errors, options.

>>> s = parse("{devices=[4,2]0,4,1,5,2,6,3,7}")
>>> str(s.to_v2())
'{devices=[4,2]<=[2,4]T(1,0)}'
>>> s == parse("{devices=[4,2]<=[2,4]T(1,0)}")
True
"""

from typing import TYPE_CHECKING

from .gspmd import parse
from .iota import canonical_iota, iota_form
from .model import HloSharding, Kind, SubgroupType
from .tiles import Tiles

if TYPE_CHECKING:
    from .canonical import normalize

__all__ = [
    "HloSharding",
    "Kind",
    "SubgroupType",
    "Tiles",
    "canonical_iota",
    "iota_form",
    "normalize",
    "parse",
]


def __getattr__(name: str):
    """`normalize`, imported on first use (cold start: a conversion never normalizes)."""
    if name == "normalize":
        from .canonical import normalize

        globals()["normalize"] = normalize
        return normalize
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

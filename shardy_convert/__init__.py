"""shardy-convert: GSPMD `mhlo.sharding` StableHLO (torch_xla, JAX) to the Shardy dialect.

`convert()` is the library entry point; `shardy_convert.sharding` is the sharding algebra
(pure Python + numpy, importable without MLIR); `shardy_convert.hook` is the pre-compile hook
for PJRT plugins. MLIR (jaxlib) is only imported when `convert` is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ShardyConvertError, ShardyConvertWarning

__version__ = "0.1.0"
__all__ = ["ShardyConvertError", "ShardyConvertWarning", "__version__", "convert"]

if TYPE_CHECKING:
    from .converter import convert


def __getattr__(name: str):
    if name == "convert":
        from .converter import convert

        globals()["convert"] = convert
        return convert
    raise AttributeError(f"module 'shardy_convert' has no attribute {name!r}")

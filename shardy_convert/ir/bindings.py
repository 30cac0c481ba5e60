"""jaxlib's MLIR Python bindings, named in one place: every module outside `ir/` takes `ir`,
`passmanager` and the dialects it needs from here, so `tests/test_tree.py` can hold the MLIR
boundary in this folder (`compat.py` is where their API differences between jaxlib releases
are handled)."""

from __future__ import annotations

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import sdy, stablehlo

__all__ = ["ir", "passmanager", "sdy", "stablehlo"]

"""jaxlib's MLIR Python bindings, named in one place: every module outside `ir/` takes `ir`,
`passmanager` and the dialects it needs from here, so `tests/test_tree.py` can hold the MLIR
boundary in this folder (`compat.py` is where their API differences between jaxlib releases
are handled)."""

from __future__ import annotations

from jaxlib.mlir import ir, passmanager

# The dialects' C extensions: their attributes, `register_dialect` and StableHLO's versions and
# portable artifacts, without the Python op classes `jaxlib.mlir.dialects.{sdy,stablehlo}` add
# on top (~30 ms of import at every start; nothing here builds ops through them). Both are
# there under these names on every supported jaxlib (0.7.1 .. 0.10.2).
from jaxlib.mlir._mlir_libs import _sdy as sdy
from jaxlib.mlir._mlir_libs import _stablehlo as stablehlo

__all__ = ["ir", "passmanager", "sdy", "stablehlo"]

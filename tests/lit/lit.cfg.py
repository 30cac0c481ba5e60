# ruff: noqa: F821  (lit injects `config`)
# lit configuration: one .mlir file per pass (Shardy/XLA style), run from tests/passes/test_lit.py.
# RUN lines call `shardy-convert` and `filecheck` from the project's virtualenv (PATH).
import os

import lit.formats
from jaxlib.mlir._mlir_libs import _sdy

config.name = "shardy-convert"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
# tests/passes/test_lit.py puts lit's Output/ (the %t files) in a temp dir.
if "LIT_EXEC_ROOT" in os.environ:
    config.test_exec_root = os.environ["LIT_EXEC_ROOT"]
config.excludes = ["Inputs"]
config.environment["PATH"] = os.environ["PATH"]
for var in ("XLA_FLAGS", "HOME", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(
    ("%testdata", os.path.join(config.test_source_root, "..", "..", "testdata"))
)

# Shardy's reduction kinds (`unreduced=max{...}`) are in newer jaxlibs only (compat.py,
# has_reduction_kinds): a file checks each jaxlib's answer with `%if sdy-reduction-kinds %{ %}`.
if hasattr(_sdy.TensorShardingAttr, "reduction_op"):
    config.available_features.add("sdy-reduction-kinds")

# Setting an op's location (ir/op_tags.py: what match-gspmd-propagation matches XLA's view by)
# is in newer jaxlibs only (compat.op_locations_settable): match_gspmd_propagation.mlir needs it,
# match_gspmd_propagation_no_tags.mlir checks the others say so.
from jaxlib.mlir import ir  # noqa: E402

if getattr(ir.Operation.location, "fset", None) is not None:
    config.available_features.add("op-locations-settable")

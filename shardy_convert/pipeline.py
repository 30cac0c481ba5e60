"""Pass pipelines as data: the project's Python passes and Shardy's `sdy-*` passes in one list.

A step is a pass name. Project passes come from `shardy_convert.passes.PASSES`; any other name
must be an MLIR pass jaxlib registers (e.g. `sdy-manual-axes-cleanup`). Unknown names are
reported all at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from jaxlib.mlir import ir, passmanager

from .errors import ShardyConvertError
from .mlir import PythonPass, run_pipeline
from .passes import PASSES

# The conversion, in order:
# 1. import-shardings needs all GSPMD strings at once to derive the one global mesh. It reads
#    V1 and V2 alike and takes each distinct string through V1 -> V2 (the algebra of
#    v1-to-v2) on its way to sdy, so running v1-to-v2 first would only rewrite strings that
#    are about to disappear; v1-to-v2 is the `v2` command's pass.
# 2. import-custom-calls reads the mesh and the `sdy.sharding`s import-shardings placed.
# 3. Shardy's own clean-ups that keep the front-end form JAX emits (what XLA compiles):
#    lifting any inlined mesh and sorting/deduplicating manual axes.
CONVERT_PIPELINE = (
    "import-shardings",
    "import-custom-calls",
    "sdy-lift-inlined-meshes",
    "sdy-manual-axes-cleanup",
)

# Shardy's round-trip form (a portable artifact's `xla.sdy.*` attributes and custom calls)
# back to the front-end form: jaxlib's registered pass reads the attributes, import-round-trip
# rebuilds the manual computations, import-custom-calls turns the `@Sharding` calls (now
# carrying `sdy.sharding`) into `sdy.sharding_constraint`.
ROUND_TRIP_IMPORT = (
    "xla-sdy-round-trip-import-shardy-attrs",
    "import-round-trip",
    "import-custom-calls",
)

# Shardy's full import: the internal form (sdy.data_flow_edge, sdy.constant) that propagation
# starts from. XLA refuses to compile it, so convert() only runs it on a copy, as validation,
# unless the caller asks for the imported form.
SDY_IMPORT = "sdy-import-pipeline"


@dataclass(frozen=True)
class Options:
    """Options of the project's passes, by field name (see ImportShardingsPass)."""

    num_devices: int | None = None
    fallback_devices: int | None = None
    mesh: tuple[tuple[str, int], ...] | None = None


def check_names(names: Sequence[str]) -> None:
    """Raises one error naming every step that is neither a project nor a registered pass."""
    unknown = [n for n in names if n not in PASSES and not _is_mlir_pass(n)]
    if unknown:
        raise ShardyConvertError(
            f"unknown pass{'es' if len(unknown) > 1 else ''}: {', '.join(unknown)} "
            f"(project passes: {', '.join(PASSES)}; or any registered sdy-* pass)"
        )


def _is_mlir_pass(name: str) -> bool:
    from .mlir import new_context

    with new_context():
        try:
            passmanager.PassManager.parse(f"builtin.module({name})")
        except ValueError:
            return False
    return True


def steps(names: Sequence[str], options: Options) -> list[str | tuple[str, PythonPass]]:
    """Instantiates the project passes with the options their dataclass fields accept."""
    out: list[str | tuple[str, PythonPass]] = []
    for name in names:
        cls = PASSES.get(name)
        if cls is None:
            out.append(name)
            continue
        accepted = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in vars(options).items() if k in accepted and v is not None}
        out.append((name, cls(**kwargs).run))
    return out


def run(
    module: ir.Module, names: Sequence[str], options: Options = Options(), verify_each: bool = True
) -> None:
    run_pipeline(module, steps(names, options), verify_each)

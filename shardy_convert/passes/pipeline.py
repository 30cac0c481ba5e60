"""Pass pipelines as data (xDSL's `PassPipeline`): a pipeline is a tuple of steps, each a
project pass *instance* (a frozen dataclass of `registry.PASSES` whose fields are its options)
or the text of a Shardy pass jaxlib registers (e.g. `sdy-manual-axes-cleanup`). The same
instances come from mlir-opt pipeline text (`parse`, through `pipeline_text`): unknown names
and bad options are reported all at once.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard, TypeVar

from ..cpp_stderr import cpp_stderr
from ..errors import ShardyConvertError, UsageError
from ..ir.analyses import Analyses
from ..ir.bindings import ir, passmanager
from ..ir.parse import new_context
from ..ir.pipeline import run_pipeline
from ..ir.sdy_attrs import has_round_trip_meshes
from . import pipeline_text
from .import_shardings import ImportShardingsPass
from .pipeline_text import Step
from .registry import PASSES

# The conversion, in order:
# 1. import-shardings needs all GSPMD strings at once to derive the one global mesh. It reads
#    V1 and V2 alike and takes each distinct string through V1 -> V2 (the algebra of
#    v1-to-v2) on its way to sdy, so running v1-to-v2 first would only rewrite strings that
#    are about to disappear; v1-to-v2 is the `v2` command's pass.
#    import-sharding-groups runs before it: it reads the shard groups (`shard_as N`) in the
#    strings, which import-shardings drops with the strings.
# 2. import-custom-calls reads the mesh and the `sdy.sharding`s import-shardings placed.
# 3. Shardy's own clean-ups that keep the front-end form JAX emits (what XLA compiles):
#    lifting any inlined mesh and sorting/deduplicating manual axes.
# 4. single-device-program, last: it reads the meshes as they will be written, and does
#    nothing unless every sharding is on one device and this jaxlib needs JAX's one-partition
#    form of such a program.
CONVERT_PIPELINE = (
    "import-sharding-groups",
    "import-shardings",
    "import-custom-calls",
    "sdy-lift-inlined-meshes",
    "sdy-manual-axes-cleanup",
    "single-device-program",
)

#: A pipeline: project pass instances and Shardy pass text, run in order.
Pipeline = tuple
_R = TypeVar("_R")

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


def parse(pipeline: str | Sequence[str | Step], defaults: Mapping | None = None) -> Pipeline:
    """A pipeline string (`builtin.module(a, b{k=v})`, `a,b`) or a list of pass names, checked
    and built (`build`): raises one UsageError naming every unknown pass and bad option.
    `defaults`: option values (by field name) for every project pass of the pipeline that has
    such a field and is not given it in the text (`opt --num-devices N`)."""
    steps = pipeline_text.read_steps(_joined(pipeline))
    problems = [p for step in steps for p in _problems(step, top=True)]
    unknown = [p for p in problems if p.startswith("unknown:")]
    if unknown:
        names = ", ".join(p.removeprefix("unknown:") for p in unknown)
        problems = [
            f"unknown pass{'es' if len(unknown) > 1 else ''}: {names} (project passes: "
            f"{', '.join(PASSES)}; or a registered Shardy pass: see list-passes)",
            *(p for p in problems if not p.startswith("unknown:")),
        ]
    if problems:
        raise UsageError("; ".join(problems))
    return build(steps, defaults)


def _problems(step: Step, top: bool) -> list[str]:
    """What is wrong with one step (and the steps nested in it)."""
    if step.nested is not None:
        nested = [p for inner in step.nested for p in _problems(inner, top=False)]
        if step.name in PASSES:
            nested.insert(0, f"pass {step.name} takes no nested pipeline")
        return nested or (_mlir_problems(step) if top else [])
    cls = PASSES.get(step.name)
    if cls is None:
        if step.name not in _shardy_passes():
            return [f"unknown:{step.name}"]
        return _mlir_problems(step) if top else []
    if not top:
        return [f"pass {step.name} runs on the whole module: give it at the top level"]
    try:
        pipeline_text.python_pass_options(step.name, cls, step.options)
    except ShardyConvertError as e:
        return [e.message]
    return []


def _mlir_problems(step: Step) -> list[str]:
    """MLIR's own objection to a step (bad options, a pass on an op it cannot run on)."""
    if step.nested is not None:
        return _nested_problems(step)

    # A registered pass *pipeline* writes why its options are bad to fd 2, not into the error.
    with new_context(), cpp_stderr() as leaked:
        try:
            passmanager.PassManager.parse(f"builtin.module({step})")
        except ValueError as e:
            error = e
        else:
            return []
    why = _first_line(f"{''.join(leaked).strip()}\n{error}")
    return [f"{step}: {why.removeprefix('<Pass-Options-Parser>: ')}"]


# MLIR aborts the process ("LLVM ERROR: Can't add pass ... restricted to 'builtin.module'")
# for some Shardy passes nested under another op, so a nested step is checked by a child.
_CHECK_CHILD = (
    "import sys; sys.path.insert(0, {root!r}); from shardy_convert.ir.bindings import passmanager; "
    "from shardy_convert.ir.parse import new_context\n"
    "with new_context(): passmanager.PassManager.parse(sys.argv[1])"
)


def _nested_problems(step: Step) -> list[str]:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = _CHECK_CHILD.format(root=root)
    child = subprocess.run(
        [sys.executable, "-c", code, f"builtin.module({step})"], capture_output=True, text=True
    )
    if child.returncode == 0:
        return []
    lines = [x for x in child.stderr.splitlines() if x.strip() and not x.startswith((" ", "Tr"))]
    message = next(
        (x for x in lines if "LLVM ERROR" in x or "Error" in x), _first_line(child.stderr)
    )
    return [f"{step}: {message.split(': ', 1)[-1]}"]


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] if lines else text


@functools.cache
def _shardy_passes() -> frozenset[str]:
    return frozenset(pipeline_text.registered_shardy_passes())


def build(pipeline: str | Sequence[str | Step], defaults: Mapping | None = None) -> Pipeline:
    """The pipeline's steps: each project pass an instance of its dataclass (the options in its
    `{...}` over `defaults`, see `pipeline_text.instance`), every other step MLIR pipeline
    text. Nothing is checked here (`parse` checks user text): for the project's own fixed
    pipelines, whose names are known."""
    parsed = pipeline if _is_parsed(pipeline) else pipeline_text.read_steps(_joined(pipeline))
    out: list = []
    for step in parsed:
        cls = PASSES.get(step.name) if step.nested is None else None
        if cls is None:
            out.append(str(step))
        else:
            out.append(pipeline_text.instance(step.name, cls, step.options, defaults))
    return tuple(out)


def conversion(importer: ImportShardingsPass, before: Sequence = ()) -> Pipeline:
    """CONVERT_PIPELINE with `importer` (the conversion's options) as its import-shardings,
    after the passes of `before` (pass instances, in order: lift-callee-shardings, pad-uneven,
    match-gspmd-boundary, match-gspmd-propagation; still GSPMD, so the matchers compile the
    padded program). A pass that compiles the module as the import will read it (it has
    `like`) gets the importer's device count, mesh and propagation options."""
    at = CONVERT_PIPELINE.index(ImportShardingsPass.NAME)
    first = tuple(step.like(importer) if hasattr(step, "like") else step for step in before)
    head, tail = build(CONVERT_PIPELINE[:at]), build(CONVERT_PIPELINE[at + 1 :])
    return (*first, *head, importer, *tail)


def _is_parsed(pipeline) -> TypeGuard[tuple[Step, ...]]:
    return isinstance(pipeline, tuple) and all(isinstance(s, Step) for s in pipeline)


def _joined(pipeline: str | Sequence[str | Step]) -> str:
    return pipeline if isinstance(pipeline, str) else ",".join(map(str, pipeline))


@dataclass(frozen=True)
class PipelineResult:
    """What the passes of one pipeline run found, in order: (pass name, result) for each pass
    whose `run` returned one (import-shardings' `MeshChoice`, iota-mesh's `DeviceOrder`,
    single-device-program's `OnOneDevice`, match-gspmd-boundary's `BoundaryOutcome`): MLIR's
    pass statistics, as values."""

    found: tuple[tuple[str, object], ...] = ()

    def of(self, kind: type[_R]) -> _R | None:
        """The last result of type `kind`, None if no pass of the run returned one."""
        return next((r for _, r in reversed(self.found) if isinstance(r, kind)), None)


def run(
    module: ir.Module,
    steps: Pipeline,
    verify_each: bool = True,
    analyses: Analyses | None = None,
) -> PipelineResult:
    """Runs the steps (pass instances and MLIR pass text, `build`/`parse`) on `module`, the
    run owning `analyses` (see ir/analyses.py); returns what its passes found."""
    return PipelineResult(tuple(run_pipeline(module, steps, verify_each, analyses)))


def import_round_trip(mod: ir.Module) -> bool:
    """Reads Shardy's round-trip form (a portable artifact's `xla.sdy.*` attributes and custom
    calls) back into the front-end form, in place; False when `mod` is not in that form."""
    if not has_round_trip_meshes(mod.operation):
        return False
    run(mod, build(ROUND_TRIP_IMPORT))
    return True

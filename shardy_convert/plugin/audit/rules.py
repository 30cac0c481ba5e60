"""The audit's findings, in the spirit of "pin every tensor whose layout matters, and check the
compiled layout still matches": pure functions of the report's rows and the policy.

    rule                    default   a tensor that
    unannotated-parameter   warning   is a parameter never given to mark_sharding: its layout
                                      is whatever propagation chose
    small-sharded           warning   is sharded and smaller than the policy's
                                      small_tensor_bytes: a stream of tiny collectives
    mark-not-compiled       error     holds another sharding than its mark after the step
    state-unlike-parameter  warning   is an optimizer state of its parameter's shape, sharded
                                      otherwise: each step reshards, or torch_xla traces again
    foreign-mesh            error     holds a sharding that is a view of no mesh the program
                                      made
    policy                  error     holds another spec than the policy's pattern for it

Each message says what was seen and the call that pins the tensor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import ShardyConvertError
from ...formats.audit import MARKS_NOT_RECORDED, AuditFinding, NotChecked, TensorRow
from ...sharding import HloSharding, Kind, parse
from ...sharding.partition_spec import Spec
from .policy import Policy


@dataclass(frozen=True)
class _Context:
    rows: dict[str, TensorRow]
    policy: Policy
    meshes: tuple[str, ...]


# What a rule needs beyond what torch_xla holds after the step: the marks the recorder saw
# (record()), or the meshes the program made (the recorder's, or those the audit is given).
NEEDS_MARKS = ("unannotated-parameter", "mark-not-compiled", "foreign-mesh")
NEEDS_A_MESH = ("policy",)


def not_checked(policy: Policy, marks_recorded: bool, meshes: tuple[str, ...]) -> list[NotChecked]:
    """The rules the policy does not turn off that cannot be checked without the recorder's
    marks (record() not called) or without any mesh to read specs on, each with why."""
    why = {}
    if not marks_recorded:
        for rule in NEEDS_MARKS:
            why[rule] = (
                f"{MARKS_NOT_RECORDED}: call shardy_convert.torch_xla.record() at the top of the "
                "program, before its first Mesh and mark_sharding (or audit(..., mesh=mesh) for "
                "specs), to have the marks and the meshes the program made"
            )
        if not meshes:
            for rule in NEEDS_A_MESH:
                why[rule] = (
                    f"{MARKS_NOT_RECORDED} and no mesh given: no spec can be read; "
                    "audit(..., mesh=mesh) gives one"
                )
    return [
        NotChecked(rule, policy.severity(rule), text)
        for rule, text in why.items()
        if policy.severity(rule) != "off"
    ]


def findings(
    rows: list[TensorRow],
    policy: Policy,
    meshes: tuple[str, ...] = (),
    skip: tuple[str, ...] = (),
) -> list[AuditFinding]:
    """Every finding the policy does not turn off, tensor by tensor in the rows' order.
    `meshes`: the labels of the meshes the program made (for the foreign-mesh message);
    `skip`: rules not checked (`not_checked`)."""
    context = _Context({row.name: row for row in rows}, policy, tuple(meshes))
    found = []
    for row in rows:
        for rule, check in _CHECKS.items():
            severity = policy.severity(rule)
            if severity == "off" or rule in skip:
                continue
            message = check(row, context)
            if message:
                found.append(AuditFinding(row.name, rule, severity, message))
    return found


def _unannotated(row: TensorRow, context: _Context) -> str | None:
    if row.kind != "parameter" or row.marked is not None or row.compiled is None:
        return None
    held = _spec_text(row.compiled_spec, row.compiled)
    wanted = _suggested(row, context.policy)
    return (
        f"never marked, so its layout is the partitioner's choice (it holds {held}); pin it: "
        f"xs.mark_sharding({_reference(row)}, mesh, {_literal(wanted, len(row.shape))})"
    )


def _suggested(row: TensorRow, policy: Policy) -> Spec:
    """The spec to pin: the policy's, else what it holds, replicated when that is small."""
    required = policy.required(row.name)
    if required is not None:
        return required[1]
    if row.compiled_spec is None or row.bytes < policy.small_tensor_bytes:
        return Spec()
    return row.compiled_spec


def _small_sharded(row: TensorRow, context: _Context) -> str | None:
    sharding = sharding_or_none(row.compiled)
    limit = context.policy.small_tensor_bytes
    if sharding is None or row.bytes >= limit or _shards(sharding) < 2:
        return None
    return (
        f"{row.bytes} bytes (under {limit}) in {_shards(sharding)} shards "
        f"{_spec_text(row.compiled_spec, row.compiled)}: a stream of tiny collectives for "
        f"little memory; replicate it: xs.mark_sharding({_reference(row)}, mesh, "
        f"{_literal(Spec(), len(row.shape))})"
    )


def _mark_not_compiled(row: TensorRow, context: _Context) -> str | None:
    marked, held = sharding_or_none(row.marked), sharding_or_none(row.compiled)
    if marked is None or held is None or _same(marked, held):
        return None
    mark = _spec_text(row.marked_spec, row.marked)
    return (
        f"marked {mark} but holds {_spec_text(row.compiled_spec, row.compiled)} after the "
        "compiled step: the next step starts resharded, or torch_xla traces it again; pin the "
        f"step's result: xs.mark_sharding({_reference(row)}, mesh, "
        f"{_literal(row.marked_spec, len(row.shape))}) after optimizer.step(), before "
        "torch_xla.sync()"
    )


def _state_unlike(row: TensorRow, context: _Context) -> str | None:
    parameter = context.rows.get(row.parameter or "")
    if parameter is None or parameter.shape != row.shape:
        return None
    mine, theirs = sharding_or_none(row.compiled), sharding_or_none(parameter.compiled)
    if mine is None or theirs is None or _same(mine, theirs):
        return None
    wanted = _spec_text(parameter.compiled_spec, parameter.compiled)
    return (
        f"holds {_spec_text(row.compiled_spec, row.compiled)}, its parameter {wanted}: the "
        "update reshards one to the other every step, and when the next step's inputs change "
        f"sharding torch_xla traces it again; pin it like its parameter: xs.mark_sharding("
        f"{_reference(row)}, mesh, {_literal(parameter.compiled_spec, len(row.shape))}) after "
        "optimizer.step(), before torch_xla.sync()"
    )


def _foreign_mesh(row: TensorRow, context: _Context) -> str | None:
    seen = (("holds", row.compiled, row.compiled_spec), ("was marked", row.marked, row.marked_spec))
    for what, hlo, spec in seen:
        sharding = sharding_or_none(hlo)
        if sharding is not None and spec is None and not sharding.is_replicated:
            made = "; ".join(context.meshes) or "none recorded"
            return (
                f"{what} {hlo}, a view of no mesh the program made ({made}): a mesh made "
                "before shardy_convert.torch_xla.record() ran, or another device order; call "
                "record() before making meshes, or give the mesh: audit(..., mesh=mesh)"
            )
    return None


def _policy(row: TensorRow, context: _Context) -> str | None:
    required = context.policy.required(row.name)
    if required is None or row.compiled is None:
        return None
    pattern, spec = required
    if row.compiled_spec == spec:
        return None
    return (
        f'the policy\'s "{pattern}" wants {spec}, it holds '
        f"{_spec_text(row.compiled_spec, row.compiled)} (marked "
        f"{_spec_text(row.marked_spec, row.marked) if row.marked is not None else 'never'}); "
        f"pin it: xs.mark_sharding({_reference(row)}, mesh, {_literal(spec, len(row.shape))})"
    )


_CHECKS: dict[str, Callable[[TensorRow, _Context], str | None]] = {
    "unannotated-parameter": _unannotated,
    "small-sharded": _small_sharded,
    "mark-not-compiled": _mark_not_compiled,
    "state-unlike-parameter": _state_unlike,
    "foreign-mesh": _foreign_mesh,
    "policy": _policy,
}


# --- helpers ----------------------------------------------------------------------------------


def sharding_or_none(hlo: str | None) -> HloSharding | None:
    """The sharding of an HLO string; None for none, or for a string our parser refuses
    (torch_xla printed it, so that is not the user's problem to report here)."""
    if hlo is None:
        return None
    try:
        return parse(hlo)
    except ShardyConvertError:
        return None


def _same(a: HloSharding, b: HloSharding) -> bool:
    """Equal placements: `""` and `{replicated}` alike (pytorch/xla#9755)."""
    return a == b or (a.is_replicated and b.is_replicated)


def _shards(sharding: HloSharding) -> int:
    """How many pieces the data is split into (replicas not counted)."""
    if sharding.kind is not Kind.TILED or sharding.is_replicated:
        return 1
    return math.prod(sharding.data_dims)


def _spec_text(spec: Spec | None, hlo: str | None) -> str:
    if spec is not None:
        return str(spec)
    return f'"{hlo}"' if hlo is not None else "nothing"


def _literal(spec: Spec | None, rank: int) -> str:
    """The partition_spec argument for `spec`: `(None, None)` for replicated."""
    if spec is None:
        return "..."
    if spec.is_replicated:
        return "(" + ", ".join(["None"] * rank) + ("," if rank == 1 else "") + ")"
    return str(spec)


def _reference(row: TensorRow) -> str:
    """Python that finds the tensor from the `model` and `optimizer` given to audit()."""
    if row.kind == "buffer":
        return f"model.get_buffer({row.name!r})"
    if row.kind == "optimizer_state" and row.parameter is not None:
        # A parameter the model does not hold is named by where the optimizer keeps it.
        owner = row.parameter
        if not owner.startswith("optimizer."):
            owner = f"model.get_parameter({owner!r})"
        return f"optimizer.state[{owner}][{row.key!r}]"
    return f"model.get_parameter({row.name!r})"

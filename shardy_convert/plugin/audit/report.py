"""`shardy_convert.torch_xla.audit`: the sharding contract of a live torch_xla program, by name.

    from shardy_convert import torch_xla as sc

    sc.record()                  # first: every Mesh and mark_sharding from here on
    ...                          # build, mark, run one step, torch_xla.sync()
    report = sc.audit(model, optimizer, policy="sharding.toml")
    print(report)                # a table: marked vs compiled, per tensor
    report.check()               # raises ShardingContractError on the policy's errors

One row per named tensor: parameters and buffers by module path, optimizer states by key and
parameter (`exp_avg of layers.0.self_attn.o_proj.weight`). `marked` is what the tensor's last
`mark_sharding` gave it (the recorder saw it: mesh_recorder.py); `compiled` is what it holds
now, torch_xla's `_get_xla_sharding_spec`: after a step, the sharding the compiled program
gave its output, which torch_xla reads back from the executable under either partitioner
(GSPMD on its built-in runtime, Shardy through `use_plugin`). Both are read as specs on the
meshes the program made (sharding/partition_spec.py), the mark's own mesh first.

The rows and findings are formats/audit.py's, the rules audit_rules.py's, the policy
audit_policy.py's; only this module touches torch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from ...errors import ShardingValueError, UsageError, clip, plural
from ...formats import meshes as mesh_file
from ...formats.audit import AuditReport, TensorRow
from ...sharding.mesh_fit import UserMesh
from ...sharding.partition_spec import Spec, spec_on
from ..torch_xla import mesh_recorder, registration
from . import rules as audit_rules
from .policy import Policy, as_policy


@dataclass(frozen=True)
class Named:
    """A tensor of the program and its name."""

    name: str
    kind: str
    tensor: object


def audit(
    model,
    optimizer=None,
    *,
    mesh=None,
    policy: Policy | dict | str | os.PathLike | None = None,
) -> AuditReport:
    """The sharding report of `model`'s parameters and buffers and `optimizer`'s states.

    Call it after `torch_xla.sync()` (a tensor still pending has no compiled sharding yet: a
    UsageError names it), best in a program that called `record()` (or `use_plugin`) before
    its first mesh and mark. Without that, the report still gives every tensor's compiled
    sharding by name (its specs on `mesh` or the global mesh, where there is one) and the
    findings that need no mark; the marked column reads "not recorded" and the rules that need
    the marks are listed as not checked (never passed: `check` counts those that are errors).
    `mesh`: a torch_xla Mesh to read specs on before the meshes the program made (default:
    those, and `xs.get_global_mesh()`). `policy`: a Policy, a dict,
    or the path of a TOML file (audit_policy.py); default: every rule at its default
    severity, no specs required.
    """
    chosen = as_policy(policy)
    recorded = mesh_recorder.RECORDER.watching_marks
    import torch_xla

    xlac = torch_xla._XLAC
    meshes = _meshes(mesh)
    named = list(named_tensors(model, optimizer))
    _check_synced(xlac, named)
    rows = [_row(xlac, item, meshes, recorded) for item in named]
    labels = tuple(m.describe() for m in meshes)
    unchecked = audit_rules.not_checked(chosen, recorded, labels)
    skip = tuple(n.rule for n in unchecked)
    found = audit_rules.findings(rows, chosen, labels, skip)
    return AuditReport(rows, found, list(labels), _runtime(), unchecked)


def named_tensors(model, optimizer=None) -> Iterator[Named]:
    """Parameters, buffers (module paths, as `named_parameters` names them: a tied weight
    once), then each parameter's optimizer states in the optimizer's order (`KEY of NAME`; a
    parameter the model does not hold is named where the optimizer keeps it)."""
    import torch

    params = dict(model.named_parameters())
    for name, p in params.items():
        yield Named(name, "parameter", p)
    for name, b in model.named_buffers():
        yield Named(name, "buffer", b)
    if optimizer is None:
        return
    names = {id(p): n for n, p in params.items()}
    seen = set()
    for g, group in enumerate(optimizer.param_groups):
        for i, p in enumerate(group["params"]):
            state = optimizer.state.get(p)
            if not state or id(p) in seen:
                continue
            seen.add(id(p))
            owner = names.get(id(p), f"optimizer.param_groups[{g}]['params'][{i}]")
            for key, value in state.items():
                if isinstance(value, torch.Tensor):
                    yield Named(f"{key} of {owner}", "optimizer_state", value)


def _meshes(given) -> tuple[UserMesh, ...]:
    """The meshes specs are read on: `given`, the global mesh, then those the program made,
    each once."""
    from torch_xla.distributed.spmd import xla_sharding

    found = [] if given is None else [mesh_file.as_user_mesh(given)]
    global_mesh = xla_sharding.get_global_mesh()
    if global_mesh is not None:
        found.append(mesh_file.as_user_mesh(global_mesh))
    found.extend(mesh_recorder.RECORDER.meshes())
    unique: list[UserMesh] = []
    for mesh in found:
        if not any((m.axes, m.ids) == (mesh.axes, mesh.ids) for m in unique):
            unique.append(mesh)
    return tuple(unique)


def _check_synced(xlac, named: list[Named]) -> None:
    on_xla = [item for item in named if _on_xla(item.tensor)]
    pending = xlac._check_tensor_need_materialization([_global(item.tensor) for item in on_xla])
    waiting = [item.name for item, p in zip(on_xla, pending) if p]
    if waiting:
        raise UsageError(
            f"{plural(len(waiting), 'tensor')} still pending ({clip(', '.join(waiting), 120)}): "
            "audit reads what the compiled step gave each tensor; call torch_xla.sync() first"
        )


def _on_xla(tensor) -> bool:
    return tensor.device.type == "xla"


def _global(tensor):
    """The tensor torch_xla holds: an XLAShardedTensor's (what `mark_sharding` returns, when
    a program keeps that) global tensor, else the tensor itself."""
    inner = getattr(tensor, "global_tensor", None)
    return tensor if inner is None else inner


def _row(xlac, item: Named, meshes: tuple[UserMesh, ...], recorded: bool = True) -> TensorRow:
    t = _global(item.tensor)
    shape = tuple(int(d) for d in t.shape)
    mark = mesh_recorder.RECORDER.mark_of(t) if recorded else None
    compiled = xlac._get_xla_sharding_spec(t) if _on_xla(t) else None
    marked_spec, on = (None, None)
    if mark is not None:
        own = (mark.mesh,) if mark.mesh is not None else ()
        marked_spec, on = _spec(mark.sharding, len(shape), own + meshes)
    compiled_spec, used = _spec(compiled, len(shape), ((on,) if on else ()) + meshes)
    mesh = used or on
    return TensorRow(
        name=item.name,
        kind=item.kind,
        shape=shape,
        bytes=int(t.numel() * t.element_size()),
        marked=None if mark is None else mark.sharding,
        compiled=compiled,
        marked_spec=marked_spec,
        compiled_spec=compiled_spec,
        dtype=_dtype(t.dtype),
        mesh=None if mesh is None else mesh.describe(),
    )


# torch's dtypes as MLIR spells element types (`inspect` prints `64x16xf32`).
_DTYPES = {"bool": "i1", "bfloat16": "bf16", "complex64": "complex<f32>"}


def _dtype(dtype) -> str:
    """`f32` for torch.float32, `i64` for torch.int64, `bf16`, `i1`."""
    name = str(dtype).removeprefix("torch.")
    if name in _DTYPES:
        return _DTYPES[name]
    for prefix, short in (("float", "f"), ("int", "i"), ("uint", "ui")):
        bits = name.removeprefix(prefix)
        if bits != name and bits.isdigit():
            return short + bits
    return name


def _spec(
    hlo: str | None, rank: int, meshes: tuple[UserMesh, ...]
) -> tuple[Spec | None, UserMesh | None]:
    """`hlo` as a spec on the first of `meshes` it reads on without sub-axes, else on the
    first it reads on at all; (None, None) when it reads on none (or is None)."""
    sharding = audit_rules.sharding_or_none(hlo)
    if sharding is None:
        return None, None
    if sharding.is_replicated:
        return Spec(), None
    fitting = []
    for mesh in meshes:
        try:
            fitting.append((spec_on(sharding, mesh, rank), mesh))
        except ShardingValueError:
            continue
    whole = [(s, m) for s, m in fitting if not any(":" in a for dim in s for a in dim)]
    if not fitting:
        return None, None
    return (whole or fitting)[0]


def _runtime() -> str:
    """Where the program runs: torch_xla's device type and the partitioner behind it."""
    import torch_xla.runtime as xr

    device = xr.device_type() or "?"  # "CPU" for a wrapper registered as "CPU_SHARDY"
    through = registration.installed_device_type()
    wrapped = through is not None and os.environ.get("PJRT_DEVICE", "").upper() == through
    return f"{device} ({'Shardy, use_plugin' if wrapped else 'GSPMD'})"

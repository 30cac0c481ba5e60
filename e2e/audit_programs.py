"""torch_xla programs for the sharding audit (e2e/test_audit.py): run like programs.py's
(run_program.py, a process each), on the built-in runtime (GSPMD) and through the wrapper
(Shardy). Each runs one AdamW step, audits it, and writes to FACTS, beside the report, what
torch_xla itself says about every tensor the report names, for the test to check the report
against:

- `held`: `_get_xla_sharding_spec` now, and `before`: right after the marks, before the step;
- `placement` (and `placement_before`): which slice of the tensor each device holds,
  torch_xla's `_get_local_shard_replica_and_indices`;
- `compiled_spec_placement` / `marked_spec_placement`: the placement torch_xla gives a fresh
  tensor of the same shape marked with the report's spec on the program's mesh.
"""

from __future__ import annotations

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs

import small_models

from .programs import _numpy, _seeded, llama_tp_setup

# What the program tells the test (run_program.py writes it into facts.json).
FACTS: dict = {}
# The policy the MLP is audited with: biases must stay replicated, and an optimizer state
# sharded unlike its parameter is an error.
MLP_POLICY = """
[rules]
state-unlike-parameter = "error"

[specs]
"*.bias" = "replicated"
"""


def placement(tensor) -> list | None:
    """The slice each device holds, device by device (None: not on an XLA device)."""
    if tensor.device.type != "xla":
        return None
    if torch_xla._XLAC._get_xla_sharding_spec(tensor) == "":
        return ["all"] * torch_xla.runtime.global_runtime_device_count()
    (shards,) = torch_xla._XLAC._get_local_shard_replica_and_indices([tensor])
    return [
        "all" if indices is Ellipsis else [[s.start, s.stop] for s in indices]
        for _, indices in shards
    ]


def spec_placement(spec, tensor, mesh) -> list | None:
    """The placement torch_xla gives a fresh tensor like `tensor` marked with `spec` (the
    report's JSON spec) on `mesh`."""
    if spec is None:
        return None
    rank = tensor.dim()
    if spec == "replicated":
        partition = (None,) * rank
    else:
        partition = tuple(tuple(d) if isinstance(d, list) else d for d in spec)
    fresh = torch.zeros(tuple(tensor.shape), dtype=tensor.dtype).to(torch_xla.device())
    xs.mark_sharding(fresh, mesh, partition)
    return placement(fresh)


def _named(model, optimizer) -> dict:
    """The program's own names for its tensors (the test checks the report has the same)."""
    from shardy_convert.plugin.audit.report import named_tensors

    return {item.name: item.tensor for item in named_tensors(model, optimizer)}


def _audited(model, optimizer, mesh, before: dict, policy: str | None = None) -> None:
    """Audits the program now (after its step) and writes the report and torch_xla's own
    reading of every tensor into FACTS."""
    from shardy_convert import torch_xla as sc
    from shardy_convert.plugin.audit.policy import Policy

    report = sc.audit(model, optimizer, policy=Policy.from_toml(policy) if policy else None)
    FACTS["report"] = report.as_json()
    FACTS["table"] = str(report)
    try:
        report.check()
        FACTS["check"] = None
    except sc.ShardingContractError as e:
        FACTS["check"] = e.message
    rows = {row["name"]: row for row in FACTS["report"]["tensors"]}
    torch_xla._XLAC._xla_wait_device_ops([])  # the shards are read once the step has run
    truth = {}
    for name, tensor in _named(model, optimizer).items():
        row = rows.get(name, {})
        truth[name] = {
            "held": (
                torch_xla._XLAC._get_xla_sharding_spec(tensor)
                if tensor.device.type == "xla"
                else None
            ),
            "placement": placement(tensor),
            "compiled_spec_placement": spec_placement(row.get("compiled_spec"), tensor, mesh),
            "marked_spec_placement": spec_placement(row.get("marked_spec"), tensor, mesh),
            **before.get(name, {}),
        }
    FACTS["truth"] = truth


def _before(model) -> dict:
    """Every parameter's sharding and placement right after the marks."""
    return {
        name: {
            "before": torch_xla._XLAC._get_xla_sharding_spec(p),
            "placement_before": placement(p),
        }
        for name, p in model.named_parameters()
    }


def mlp_adamw() -> dict:
    """The two-layer MLP of the issue: both weights marked on a (2, 4) mesh, the biases left
    unannotated (the 64-element one is sharded by propagation), one AdamW step."""
    from shardy_convert import torch_xla as sc

    sc.record()  # before the mesh: the recorder sees it and the marks
    torch.manual_seed(0)
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    model = small_models.tp_mlp(16, 64, mesh, dev=torch_xla.device(), shard_bias=False)
    before = _before(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = _seeded(8, 16).to(torch_xla.device())
    xs.mark_sharding(x, mesh, ("data", None))
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    _audited(model, optimizer, mesh, before, MLP_POLICY)
    return _numpy({"loss": loss, **{f"param.{n}": p for n, p in model.named_parameters()}})


def llama_tp_adamw() -> dict:
    """HF transformers LlamaForCausalLM (tiny config, random init) with Megatron tensor
    parallelism on a (2, 4) mesh (programs.llama_tp_setup), one AdamW step."""
    from shardy_convert import torch_xla as sc

    sc.record()
    model, ids = llama_tp_setup(list(range(8)))
    mesh = _mesh_of()
    before = _before(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    optimizer.zero_grad()
    loss = small_models.lm_forward(model, ids).loss
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    _audited(model, optimizer, mesh, before)
    return _numpy({"loss": loss})


def _mesh_of():
    """The (2, 4) mesh llama_tp_setup made (it is the recorder's only mesh)."""
    from shardy_convert.plugin.torch_xla.mesh_recorder import RECORDER

    (mesh,) = RECORDER.meshes()
    axes = tuple(name for name, _ in mesh.axes)
    return xs.Mesh(np.array(mesh.ids), tuple(size for _, size in mesh.axes), axes)


def graph_roots() -> dict:
    """Why dumps get no names (docs/audit.md): just before the sync of the MLP's AdamW step,
    how many live tensors await a result (the graph's outputs, whose post-order walk numbers
    its parameters) and how many of those any Python object refers to."""
    import gc

    torch.manual_seed(0)
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16)
    ).to(torch_xla.device())
    xs.mark_sharding(model[0].weight, mesh, ("model", None))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = _seeded(8, 16).to(torch_xla.device())
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    gc.collect()
    seen = {}
    for o in gc.get_objects():
        if isinstance(o, torch.Tensor) and o.device.type == "xla":
            seen.setdefault(torch_xla._XLAC._xla_get_tensor_id(o), o)
    visible = sum(torch_xla._XLAC._check_tensor_need_materialization(list(seen.values())))
    FACTS["pending"] = sum(torch_xla._XLAC._check_device_tensor_need_materialization(""))
    FACTS["visible_pending"] = visible
    torch_xla.sync()
    return _numpy({"loss": loss})


def mlp_adamw_unrecorded() -> dict:
    """The MLP's AdamW step in a program that never called record(): audited as it is, and
    again with its mesh given (specs read on it). Through use_plugin the marks are recorded
    all the same (use_plugin starts the recorder)."""
    from shardy_convert import torch_xla as sc
    from shardy_convert.plugin.audit.policy import Policy

    torch.manual_seed(0)
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    model = small_models.tp_mlp(16, 64, mesh, dev=torch_xla.device(), shard_bias=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = _seeded(8, 16).to(torch_xla.device())
    xs.mark_sharding(x, mesh, ("data", None))
    optimizer.zero_grad()
    model(x).pow(2).mean().backward()
    optimizer.step()
    torch_xla.sync()
    policy = Policy.from_toml(MLP_POLICY)
    for key, given in (("plain", None), ("with_mesh", mesh)):
        report = sc.audit(model, optimizer, mesh=given, policy=policy)
        FACTS[key] = {"report": report.as_json(), "table": str(report)}
        try:
            report.check()
            FACTS[key]["check"] = None
        except sc.ShardingContractError as e:
            FACTS[key]["check"] = e.message
    FACTS["held"] = {
        name: torch_xla._XLAC._get_xla_sharding_spec(t) if t.device.type == "xla" else None
        for name, t in _named(model, optimizer).items()
    }
    return {}


PROGRAMS = {
    "audit_mlp_adamw": (mlp_adamw, 8),
    "audit_mlp_adamw_unrecorded": (mlp_adamw_unrecorded, 8),
    "audit_llama_tp_adamw": (llama_tp_adamw, 8),
    "audit_graph_roots": (graph_roots, 8),
}

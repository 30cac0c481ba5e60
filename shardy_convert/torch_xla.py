"""`shardy_convert.torch_xla`: the public names of the torch_xla entry points: `use_plugin`,
`record_meshes` and `record` (plugin/torch_xla.py), `audit` and its report and policy
(plugin/audit.py)."""

from __future__ import annotations

from .errors import ShardingContractError
from .formats.audit import AuditFinding, AuditReport, TensorRow
from .plugin.audit import audit
from .plugin.audit_policy import Policy
from .plugin.torch_xla import Handle, record, record_meshes, use_plugin

__all__ = [
    "AuditFinding",
    "AuditReport",
    "Handle",
    "Policy",
    "ShardingContractError",
    "TensorRow",
    "audit",
    "record",
    "record_meshes",
    "use_plugin",
]

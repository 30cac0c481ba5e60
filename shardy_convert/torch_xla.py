"""`shardy_convert.torch_xla`: the public names of the torch_xla entry points: `use_plugin`,
`record_meshes` and `record` (plugin/torch_xla/use.py), `audit` and its report and policy
(plugin/audit/), `cpu_plugin_path` (OpenXLA's CPU plugin to run them on,
plugin/plugin_library.py)."""

from __future__ import annotations

from .errors import ShardingContractError
from .formats.audit import AuditFinding, AuditReport, TensorRow
from .plugin.audit.policy import Policy
from .plugin.audit.report import audit
from .plugin.plugin_library import cpu_plugin_path
from .plugin.torch_xla.use import Handle, record, record_meshes, use_plugin

__all__ = [
    "AuditFinding",
    "AuditReport",
    "Handle",
    "Policy",
    "ShardingContractError",
    "TensorRow",
    "audit",
    "cpu_plugin_path",
    "record",
    "record_meshes",
    "use_plugin",
]

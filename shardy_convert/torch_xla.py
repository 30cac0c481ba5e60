"""`shardy_convert.torch_xla.use_plugin` and `record_meshes`, the public names of the torch_xla
entry points (they live in `plugin/torch_xla.py`)."""

from __future__ import annotations

from .plugin.torch_xla import Handle, record_meshes, use_plugin

__all__ = ["Handle", "record_meshes", "use_plugin"]

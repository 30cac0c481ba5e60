"""`shardy_convert.torch_xla.use_plugin`, the public name of the torch_xla entry point (it
lives in `plugin/torch_xla.py`)."""

from __future__ import annotations

from .plugin.torch_xla import Handle, use_plugin

__all__ = ["Handle", "use_plugin"]

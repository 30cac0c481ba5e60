"""`shardy_convert.hook.Hook`, the public name of the compile hook (it lives in
`plugin/hook.py`)."""

from __future__ import annotations

from .plugin.hook import POLICIES, Hook

__all__ = ["POLICIES", "Hook"]

"""The mark on torch_xla functions this package wrapped (`_XLAC`'s syncs, `Mesh.__init__`,
`mark_sharding`, the sharding spellings): wrapping again is then a no-op, so that
`use_plugin` and `record_meshes` stay idempotent however often they are called."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_MARK = "_shardy_convert"
_F = TypeVar("_F", bound=Callable)


def ours(function: object) -> bool:
    """Whether `function` is a wrapper this package made (`mark`)."""
    return bool(getattr(function, _MARK, False))


def mark(wrapper: _F) -> _F:
    """`wrapper`, marked as this package's."""
    setattr(wrapper, _MARK, True)
    return wrapper

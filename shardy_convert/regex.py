"""Regular expressions compiled where they are first used, not when their module is imported.

Most of the package's patterns serve one input form or one error (HLO text, debug locations,
XLA's fatal log line, ...), which a conversion may never meet; compiling all of them at import
was ~2 ms of every command-line start. A pattern a conversion matches on every sharding stays
a plain `re.compile` at module level.

    _HEADER = regex.lazy(r"^HloModule ")
    ...
    _HEADER().match(text)   # compiled on this first call, the same object after
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import AnyStr


def lazy(pattern: AnyStr, flags: int = 0) -> Callable[[], re.Pattern[AnyStr]]:
    """`re.compile(pattern, flags)`, made on the first call and returned by every call."""
    return functools.cache(functools.partial(re.compile, pattern, flags))

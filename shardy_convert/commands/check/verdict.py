"""The verdicts a graph can get (`compare` gives one; `render_text` and `render_json` print it).
A module of its own: the formatters and the comparison both need it, and neither imports the
other's module for it. What each means and the evidence behind it: docs/check.md."""

from __future__ import annotations

import enum


class Verdict(enum.Enum):
    SAME = "same program"
    REASSOCIATED = "same program up to float reassociation"
    CONVERSION_DIFFERS = "conversion differs"
    COMPILER_DIFFERS = "compiler differs from the unpartitioned reference"
    PLACEMENT_ONLY = "same placement, values not run"

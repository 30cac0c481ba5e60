"""Option values checked when the command line is read: a bad one is a usage error (exit 2),
reported before any input is read."""

from __future__ import annotations

import click

from ..errors import ShardyConvertError


class TargetVersion(click.ParamType):
    """`--target-version X.Y.Z`: a StableHLO version this jaxlib writes."""

    name = "X.Y.Z"

    def convert(self, value, param, ctx):
        from ..formats.module import check_version

        try:
            check_version(value)
        except ShardyConvertError as e:
            self.fail(e.message, param, ctx)
        return value

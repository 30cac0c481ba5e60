"""Kept for callers of `shardy_convert.sharding.parser.parse`: the parser is `gspmd/`."""

from .gspmd import parse

__all__ = ["parse"]

"""GSPMD sharding text, as XLA's `hlo_parser.cc` reads it: the lexer, the V1/V2 grammar, the
named (V3) grammar, `metadata={...}`, and the one-regex fast path. May use: errors, options,
and the sharding model beside this package (model, named, tiles, iota, xla_rules)."""

from .parser import parse

__all__ = ["parse"]

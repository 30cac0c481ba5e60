"""The sharding policy a program's audit is checked against, as the user writes it in TOML:

    small_tensor_bytes = 4096          # below this, a sharded tensor is a finding

    [rules]                            # each finding: "error", "warning" or "off"
    unannotated-parameter = "error"
    state-unlike-parameter = "error"

    [specs]                            # name patterns -> the spec the tensor must hold
    "model.layers.*.self_attn.o_proj.weight" = "(None, 'model')"
    "*.bias" = "replicated"

Patterns are shell globs (`fnmatch`: `*` also matches dots) over the whole name, optimizer
states included (`*.bias` matches `exp_avg of 0.bias` too); the first pattern that matches a
name decides. A spec is written as `print(report)` shows it (sharding/partition_spec.py).
A tensor that holds another spec than its pattern's is a `policy` finding. `report.check()`
raises on the findings whose rule is an error.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ShardingValueError, ShardyConvertError, UsageError, clip
from ...sharding.partition_spec import Spec, parse_spec

# Each rule's severity unless the policy says otherwise. A mark the compiled program did not
# keep, a tensor on no mesh the program made and a policy violation break the contract the
# program states; the others are costs the user may have chosen.
DEFAULT_RULES = {
    "unannotated-parameter": "warning",
    "small-sharded": "warning",
    "mark-not-compiled": "error",
    "state-unlike-parameter": "warning",
    "foreign-mesh": "error",
    "policy": "error",
}
LEVELS = ("error", "warning", "off")
# 1024 f32 elements, inspect's SMALL_ELEMENTS: below it, collectives cost more than sharding
# saves.
DEFAULT_SMALL_BYTES = 4096
_KEYS = ("small_tensor_bytes", "rules", "specs")


@dataclass(frozen=True)
class Policy:
    """`specs`: (pattern, spec) pairs, first match wins; `small_tensor_bytes`: the
    small-sharded threshold; `rules`: each rule's severity ("error", "warning", "off")."""

    specs: tuple[tuple[str, Spec], ...] = ()
    small_tensor_bytes: int = DEFAULT_SMALL_BYTES
    rules: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_RULES))

    def severity(self, rule: str) -> str:
        return self.rules.get(rule, DEFAULT_RULES[rule])

    def required(self, name: str) -> tuple[str, Spec] | None:
        """The first (pattern, spec) whose pattern matches `name`, or None."""
        return next(((p, s) for p, s in self.specs if fnmatch.fnmatchcase(name, p)), None)

    @classmethod
    def from_dict(cls, value: dict, file: str | None = None) -> Policy:
        """A policy from TOML's (or any) mapping; ShardyConvertError naming `file` and the
        bad key."""
        unknown = [k for k in value if k not in _KEYS]
        if unknown:
            raise _error(f"unknown key {unknown[0]!r} (a policy has {', '.join(_KEYS)})", file)
        small = value.get("small_tensor_bytes", DEFAULT_SMALL_BYTES)
        if type(small) is not int or small < 0:
            raise _error(f"small_tensor_bytes must be a byte count >= 0, not {small!r}", file)
        return cls(
            _specs(value.get("specs", {}), file), small, _rules(value.get("rules", {}), file)
        )

    @classmethod
    def from_toml(cls, text: str, file: str | None = None) -> Policy:
        try:
            value = _toml().loads(text)
        except _toml().TOMLDecodeError as e:
            raise _error(f"not TOML: {e}", file) from None
        return cls.from_dict(value, file)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Policy:
        """The policy in the TOML file `path`."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise ShardyConvertError(
                f"cannot read the policy: {e.strerror}", file=str(path)
            ) from None
        except UnicodeDecodeError as e:
            raise ShardyConvertError(f"not a TOML policy ({e})", file=str(path)) from None
        return cls.from_toml(text, str(path))


def _specs(value, file: str | None) -> tuple[tuple[str, Spec], ...]:
    if not isinstance(value, dict):
        raise _error("[specs] maps name patterns to specs", file)
    out = []
    for pattern, spec in value.items():
        try:
            out.append((pattern, parse_spec(spec)))
        except ShardingValueError as e:
            raise _error(f"specs.{pattern!r}: {e.message}", file) from None
    return tuple(out)


def _rules(value, file: str | None) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _error("[rules] maps rule names to error, warning or off", file)
    rules = dict(DEFAULT_RULES)
    for rule, level in value.items():
        if rule not in DEFAULT_RULES:
            raise _error(f"unknown rule {rule!r} (rules: {', '.join(DEFAULT_RULES)})", file)
        if level not in LEVELS:
            raise _error(f"rules.{rule} must be one of {', '.join(LEVELS)}, not {level!r}", file)
        rules[rule] = level
    return rules


def _error(message: str, file: str | None) -> ShardyConvertError:
    return ShardyConvertError(f"policy: {message}", file=file)


def _toml():
    """tomllib (Python 3.11+), or tomli, its backport, on 3.10."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli

    return tomli


def as_policy(value: Policy | dict | str | os.PathLike | None) -> Policy:
    """`audit(policy=...)`: None (the defaults), a Policy, a mapping as TOML reads, or the
    path of a TOML file."""
    if value is None:
        return Policy()
    if isinstance(value, Policy):
        return value
    if isinstance(value, dict):
        return Policy.from_dict(value)
    if isinstance(value, (str, os.PathLike)):
        return Policy.load(value)
    raise UsageError(
        f"policy must be a Policy, a dict or the path of a TOML file, not {clip(repr(value), 60)}"
    )

"""The sharding audit report: one row per named tensor of a torch_xla program, and findings.

`shardy_convert.torch_xla.audit` builds it from a live program (plugin/audit/report.py); `diff`
reads two of them as JSON (commands/diff_audit.py). Data first: `to_json()` and `str()` are
two views of the same rows, and `check()` raises on the findings the policy made errors.

JSON (`to_json()`), the schema as the issue that asked for it gives it, nothing added:

    {"tensors": [{"name": str (`0.weight`, `exp_avg of 0.weight`),
                  "kind": "parameter" | "buffer" | "optimizer_state",
                  "shape": [int], "bytes": int,
                  "marked": str | null (the HLO sharding mark_sharding gave it; null: never
                                        marked),
                  "compiled": str | null (the HLO sharding it holds now, torch_xla's
                                          `_get_xla_sharding_spec`: after a step, what the
                                          compiled program gave it; null: not on an XLA
                                          device),
                  "marked_spec": spec | null, "compiled_spec": spec | null}],
     "findings": [{"name": str, "rule": str, "severity": "error" | "warning",
                   "message": str}]}

A spec is the sharding on the user's mesh axis names (sharding/partition_spec.py):
`"replicated"`, or one item per tensor dim, null, an axis name or a list of names (major
first), e.g. `["model", null]`; null when the sharding is a view of no mesh the program made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import ShardingContractError, ShardyConvertError, clip, plural
from ..sharding.partition_spec import Spec, parse_spec

KINDS = ("parameter", "buffer", "optimizer_state")
SEVERITIES = ("error", "warning")
# How a rule not checked for want of the recorder's marks says why (NotChecked.why).
MARKS_NOT_RECORDED = "marks not recorded"
# The HLO strings of hundreds of device ids are clipped in the table only.
HLO_CELL_LIMIT = 64


@dataclass(frozen=True)
class TensorRow:
    """One named tensor. `dtype` and `mesh` (the label of the mesh its specs are on) are for
    the table; the JSON keeps to the schema."""

    name: str
    kind: str
    shape: tuple[int, ...]
    bytes: int
    marked: str | None = None
    compiled: str | None = None
    marked_spec: Spec | None = None
    compiled_spec: Spec | None = None
    dtype: str | None = None
    mesh: str | None = None

    @property
    def parameter(self) -> str | None:
        """An optimizer state's parameter: `0.weight` of `exp_avg of 0.weight`."""
        if self.kind != "optimizer_state" or " of " not in self.name:
            return None
        return self.name.split(" of ", 1)[1]

    @property
    def key(self) -> str | None:
        """An optimizer state's key: `exp_avg` of `exp_avg of 0.weight`."""
        return self.name.split(" of ", 1)[0] if self.parameter is not None else None

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "shape": list(self.shape),
            "bytes": self.bytes,
            "marked": self.marked,
            "compiled": self.compiled,
            "marked_spec": None if self.marked_spec is None else self.marked_spec.as_json(),
            "compiled_spec": None if self.compiled_spec is None else self.compiled_spec.as_json(),
        }


@dataclass(frozen=True)
class NotChecked:
    """A rule the audit could not check, and why (`marks not recorded: ...`): never passed."""

    rule: str
    severity: str
    why: str

    def __str__(self) -> str:
        return f"not checked: {self.rule} ({self.severity}): {self.why}"

    def as_json(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "why": self.why}


@dataclass(frozen=True)
class AuditFinding:
    """Something about one tensor: `rule` names the check (`unannotated-parameter`, ...),
    `message` says what was seen and what to do."""

    name: str
    rule: str
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.name}: {self.message} [{self.rule}]"

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass
class AuditReport:
    """The tensors in the program's order (parameters, buffers, then optimizer states) and
    the findings about them. `meshes`: the labels of the meshes specs were read on;
    `runtime`: where the program ran (`CPU (GSPMD)`, `SHARDY (Shardy, use_plugin)`)."""

    tensors: list[TensorRow] = field(default_factory=list)
    findings: list[AuditFinding] = field(default_factory=list)
    meshes: list[str] = field(default_factory=list)
    runtime: str | None = None
    # the rules that could not be checked (an audit without record(): the marks), each never
    # passed: `check` counts those its policy makes errors
    not_checked: list[NotChecked] = field(default_factory=list)

    @property
    def marks_recorded(self) -> bool:
        return not any(n.why.startswith(MARKS_NOT_RECORDED) for n in self.not_checked)

    @property
    def errors(self) -> list[AuditFinding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[AuditFinding]:
        return [f for f in self.findings if f.severity == "warning"]

    def tensor(self, name: str) -> TensorRow:
        """The row of `name`; KeyError when the report has none."""
        for row in self.tensors:
            if row.name == name:
                return row
        raise KeyError(name)

    def check(self) -> None:
        """Raises ShardingContractError when a finding is an error (its policy decides which
        rules are), or when a rule its policy makes an error could not be checked (not
        checked is never passed); the message lists them, one a line."""
        errors = self.errors
        unchecked = [n for n in self.not_checked if n.severity == "error"]
        if not errors and not unchecked:
            return
        lines = "\n".join(f"  {f}" for f in [*errors, *unchecked])
        said = [plural(len(errors), "error")] if errors else []
        said += [f"{plural(len(unchecked), 'rule')} not checked"] if unchecked else []
        raise ShardingContractError(
            f"the sharding contract is broken or unchecked: {', '.join(said)}\n{lines}"
            if unchecked
            else f"the sharding contract is broken: {said[0]}\n{lines}",
            findings=tuple(errors),
        )

    def as_json(self) -> dict:
        document = {
            "tensors": [row.as_json() for row in self.tensors],
            "findings": [f.as_json() for f in self.findings],
        }
        if self.not_checked:  # only where a rule was not checked: reports before it stay so
            document["not_checked"] = [n.as_json() for n in self.not_checked]
        return document

    def to_json(self) -> str:
        """The report as JSON text (the schema in this module's docstring), a tensor or a
        finding a line, for diffs and eyes."""
        parts = []
        for key, items in self.as_json().items():
            lines = ",\n  ".join(json.dumps(item) for item in items)
            parts.append(f'"{key}": [\n  {lines}\n]' if items else f'"{key}": []')
        return "{" + ",\n".join(parts) + "}\n"

    def __str__(self) -> str:
        return format_table(self)


# --- the table --------------------------------------------------------------------------------

_HEADER = ["TENSOR", "KIND", "SHAPE", "BYTES", "MARKED", "COMPILED", "COMPILED (HLO)"]


def format_table(report: AuditReport) -> str:
    """An aligned table as `inspect` prints one: a header line, a row per tensor, the
    findings, a summary line."""
    on = "; ".join(report.meshes) or "no mesh recorded"
    head = f"== sharding audit: {plural(len(report.tensors), 'tensor')} on {on}"
    lines = [head + (f", run on {report.runtime}" if report.runtime else "")]
    unmarked = "-" if report.marks_recorded else "not recorded"
    rows = [_HEADER] + [_row(row, unmarked) for row in report.tensors]
    lines += ["   " + line for line in _align(rows)]
    if report.findings:
        cells = [[f.severity, f.name, f.rule, f.message] for f in report.findings]
        lines += ["   findings:"] + ["     " + line for line in _align(cells)]
    lines += [f"   {n}" for n in report.not_checked]
    counts = ", ".join(plural(sum(f.severity == s for f in report.findings), s) for s in SEVERITIES)
    lines.append(f"{plural(len(report.tensors), 'tensor')}; findings: {counts}")
    return "\n".join(lines) + "\n"


def _row(row: TensorRow, unmarked: str = "-") -> list[str]:
    dims = "x".join(map(str, row.shape))
    shape = f"{dims}x{row.dtype}" if dims and row.dtype else dims or row.dtype or "scalar"
    return [
        row.name,
        row.kind,
        shape,
        str(row.bytes),
        _spec_cell(row.marked, row.marked_spec, unmarked),
        _spec_cell(row.compiled, row.compiled_spec, "- (not on XLA)"),
        "-" if row.compiled is None else clip(row.compiled or '""', HLO_CELL_LIMIT),
    ]


def _spec_cell(hlo: str | None, spec: Spec | None, absent: str) -> str:
    if hlo is None:
        return absent
    return str(spec) if spec is not None else "? (no mesh fits)"


def _align(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


# --- reading JSON back --------------------------------------------------------------------------


def looks_like_report(data: str | bytes) -> bool:
    """Whether `data` is JSON with the report's two keys (how `diff` tells a report from a
    module or dump: neither starts with `{`)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if not text.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and "tensors" in value and "findings" in value


def from_json(data: str | bytes, file: str | None = None) -> AuditReport:
    """A report from its JSON; ShardyConvertError naming `file` and the bad entry."""
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ShardyConvertError(f"not an audit report (no JSON: {e})", file=file) from None
    if not isinstance(value, dict) or not isinstance(value.get("tensors"), list):
        raise ShardyConvertError(
            'not an audit report: expected {"tensors": [...], "findings": [...]}', file=file
        )
    report = AuditReport()
    for k, item in enumerate(value["tensors"]):
        try:
            report.tensors.append(_read_row(item))
        except (ShardyConvertError, KeyError, TypeError, ValueError) as e:
            raise ShardyConvertError(f"tensor {k}: {_reason(e)}", file=file) from None
    for k, item in enumerate(value.get("not_checked") or []):
        try:
            report.not_checked.append(
                NotChecked(*(str(item[key]) for key in ("rule", "severity", "why")))
            )
        except (KeyError, TypeError) as e:
            raise ShardyConvertError(f"not_checked {k}: {_reason(e)}", file=file) from None
    for k, item in enumerate(value.get("findings") or []):
        try:
            report.findings.append(
                AuditFinding(*(str(item[key]) for key in ("name", "rule", "severity", "message")))
            )
        except (KeyError, TypeError) as e:
            raise ShardyConvertError(f"finding {k}: {_reason(e)}", file=file) from None
    return report


def _read_row(item: dict) -> TensorRow:
    if item["kind"] not in KINDS:
        raise ValueError(f"kind {item['kind']!r} is none of {', '.join(KINDS)}")
    return TensorRow(
        name=str(item["name"]),
        kind=item["kind"],
        shape=tuple(int(d) for d in item["shape"]),
        bytes=int(item["bytes"]),
        marked=_optional_text(item["marked"]),
        compiled=_optional_text(item["compiled"]),
        marked_spec=None if item["marked_spec"] is None else parse_spec(item["marked_spec"]),
        compiled_spec=None if item["compiled_spec"] is None else parse_spec(item["compiled_spec"]),
    )


def _optional_text(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"a sharding is a string or null, not {clip(repr(value), 40)}")
    return value


def _reason(e: Exception) -> str:
    if isinstance(e, ShardyConvertError):
        return e.message
    if isinstance(e, KeyError):
        return f"no {e.args[0]!r}"
    return str(e)

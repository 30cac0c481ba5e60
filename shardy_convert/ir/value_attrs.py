"""A func's argument or result attribute dictionaries, edited in Python and written back once
(`ValueAttrs`)."""

from __future__ import annotations

from jaxlib.mlir import ir


class ValueAttrs:
    """The `arg_attrs` or `res_attrs` of one func, written back once by save().

    Rebuilding the array attribute per change would be quadratic in the argument count. An
    entry becomes a Python dict only when it is edited (`dict`, `replace`); `has` reads the
    attribute itself, and save() keeps every entry not edited as it was. `count`: how many
    values the func has, if the caller has their types at hand (else read from its type).
    """

    def __init__(self, func: ir.Operation, kind: str, count: int | None = None):
        self.func = func
        self.name = "arg_attrs" if kind == "arg" else "res_attrs"
        if count is None:
            count = len(value_types_of(func, kind))
        self.attrs = value_dicts(func, kind)
        self.count = max(count, len(self.attrs))
        self._edited: dict[int, dict[str, ir.Attribute]] = {}
        self.changed = False  # for callers that read several and write back those they edit

    def has(self, k: int, *names: str) -> bool:
        """Whether value `k` has an attribute of one of `names`."""
        if k in self._edited:
            return any(name in self._edited[k] for name in names)
        return k < len(self.attrs) and any(name in self.attrs[k] for name in names)

    def dict(self, k: int) -> dict[str, ir.Attribute]:
        """Value `k`'s attributes as a dict to edit in place (saved by save())."""
        if k not in self._edited:
            self._edited[k] = as_dict(self.attrs[k]) if k < len(self.attrs) else {}
        return self._edited[k]

    def replace(self, k: int, old: str, new: str, attr: ir.Attribute) -> None:
        """Value `k` gets `new` = `attr` instead of `old` (if it had it). Without reading the
        entry where `old` is its only attribute (a torch_xla parameter's `mhlo.sharding`)."""
        if k not in self._edited and k < len(self.attrs):
            entry = self.attrs[k]
            if len(entry) == 1 and old in entry:
                self._edited[k] = {new: attr}
                return
        values = self.dict(k)
        values.pop(old, None)
        values[new] = attr

    def save(self) -> None:
        empty = None
        entries = []
        for k in range(self.count):
            if k in self._edited:
                entries.append(ir.DictAttr.get(self._edited[k]))
            elif k < len(self.attrs):
                entries.append(self.attrs[k])
            else:
                empty = empty or ir.DictAttr.get({})
                entries.append(empty)
        self.func.attributes[self.name] = ir.ArrayAttr.get(entries)


def edited(edits: dict, func: ir.Operation, kind: str, count: int | None = None) -> ValueAttrs:
    """The ValueAttrs of `func`'s arguments or results, made once and kept in `edits` (for
    passes that read several and save those they changed at the end)."""
    key = (func, kind)
    if key not in edits:
        edits[key] = ValueAttrs(func, kind, count)
    return edits[key]


def value_dicts(func: ir.Operation, kind: str) -> list[ir.DictAttr]:
    """The attribute dictionary of each argument (`kind` "arg") or result of a func, as the
    func writes them (`arg_attrs`, `res_attrs`; [] where it writes none)."""
    name = "arg_attrs" if kind == "arg" else "res_attrs"
    if name not in func.attributes:
        return []
    return [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes[name])]


def value_dict(func: ir.Operation, kind: str, k: int) -> ir.DictAttr | None:
    """The attribute dictionary of a func's argument (`kind` "arg") or result `k`; None where
    the func writes none for it."""
    name = "arg_attrs" if kind == "arg" else "res_attrs"
    if name not in func.attributes:
        return None
    entries = ir.ArrayAttr(func.attributes[name])
    return ir.DictAttr(entries[k]) if k < len(entries) else None


def value_types_of(func: ir.Operation, kind: str) -> list[ir.Type]:
    """The types of a func's arguments (`kind` "arg") or results."""
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    return list(ftype.inputs if kind == "arg" else ftype.results)


def as_dict(d: ir.DictAttr) -> dict[str, ir.Attribute]:
    """A DictAttr's entries by name, each read once."""
    out = {}
    for i in range(len(d)):
        entry = d[i]  # one NamedAttribute per entry (each `d[i]` makes a new one)
        out[entry.name] = entry.attr
    return out

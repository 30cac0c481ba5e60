"""The Shardy sharding a value's frontend attributes state beside its GSPMD string.

Tenstorrent's torch_xla fork writes, on the same argument or op, `mhlo.sharding` (the
placement, V2) and `mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh,
[{"mesh_idx_0"}p0, {}p1]>"}`: the dims' priorities, which no GSPMD string can say, over axis
names that may be placeholders. Its patched XLA importer (`openxla_patches/
sdy_sharding_priority.diff`, `tryParsePrioritiesFromFrontendAttr`) parses that attribute and
gives the imported sharding its per-dim priorities; import-shardings does the same here
(`sharding.sdy.with_stated`), and removes the entry it has read.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ..errors import ModuleError, clip
from ..sharding.sdy import AxisRef, DimSharding, TensorSharding
from .bindings import sdy
from .value_attrs import as_dict, value_dict

FRONTEND = "mhlo.frontend_attributes"
STATED = "xla.sdy.sharding"


def has_stated(attrs) -> bool:
    """Whether an attribute mapping (an op's `attributes`, a value's dict) holds frontend
    attributes with an `xla.sdy.sharding` entry."""
    if FRONTEND not in attrs:
        return False
    front = attrs[FRONTEND]
    return isinstance(front, ir.DictAttr) and STATED in front


def stated_at(owner: ir.Operation, kind: str, index: int) -> str | None:
    """The `xla.sdy.sharding` text beside a sharding site (`kind` "arg", "result" or "op" of
    `owner`, as the walker's Site says), left where it is; None when there is none."""
    attrs: ir.OpAttributeMap | ir.DictAttr
    if kind == "op":
        attrs = owner.attributes
    else:
        found = value_dict(owner, kind, index) if kind in ("arg", "result") else None
        if found is None:
            return None
        attrs = found
    if not has_stated(attrs):
        return None
    value = ir.DictAttr(attrs[FRONTEND])[STATED]
    return value.value if isinstance(value, ir.StringAttr) else None


def pop_stated(attrs) -> str | None:
    """The `xla.sdy.sharding` text of `attrs`' frontend attributes, removed from them (the
    frontend attributes go too when nothing else is left); None when there is none."""
    if not has_stated(attrs):
        return None
    entries = as_dict(ir.DictAttr(attrs[FRONTEND]))
    value = entries.pop(STATED)
    if not isinstance(value, ir.StringAttr):
        raise ModuleError(f'{STATED} must be a string like "#sdy.sharding<...>", not {clip(value)}')
    if entries:
        attrs[FRONTEND] = ir.DictAttr.get(entries)
    else:
        del attrs[FRONTEND]
    return value.value


def stated_shardings(text: str) -> list[TensorSharding]:
    """The sharding(s) an `xla.sdy.sharding` text states: one `#sdy.sharding<...>` or an op's
    `#sdy.sharding_per_value<[...]>` (as plain data; the mesh is only a name, placeholders
    allowed). ModuleError, with MLIR's reason, for anything else."""
    try:
        attr = ir.Attribute.parse(text)
    except (ir.MLIRError, ValueError) as e:  # ValueError: jaxlib 0.7.1
        diagnostics = getattr(e, "error_diagnostics", None) or []
        reason = " ".join(str(d.message) for d in diagnostics) or str(e).strip().splitlines()[-1]
        raise ModuleError(
            f'{STATED} "{clip(text)}" is no Shardy sharding: {clip(reason, 200)}'
        ) from None
    if sdy.TensorShardingPerValueAttr.isinstance(attr):
        return [_plain(a) for a in sdy.TensorShardingPerValueAttr(attr).shardings]
    if sdy.TensorShardingAttr.isinstance(attr):
        return [_plain(attr)]
    raise ModuleError(f'{STATED} "{clip(text)}" is no #sdy.sharding or #sdy.sharding_per_value')


def _plain(attr: ir.Attribute) -> TensorSharding:
    ts = sdy.TensorShardingAttr(attr)
    ref = ts.mesh_or_ref
    mesh = ref.value if isinstance(ref, ir.FlatSymbolRefAttr) else ""
    dims = []
    for d in ts.dimension_shardings:
        d = sdy.DimensionShardingAttr(d)
        axes = tuple(AxisRef(sdy.AxisRefAttr(a).name) for a in d.axes)
        dims.append(DimSharding(axes, d.is_closed, d.priority))
    return TensorSharding(mesh, tuple(dims))

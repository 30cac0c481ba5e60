"""import-sharding-groups: GSPMD's shard groups (`shard_as N`, `shard_like N`) become Shardy
sharding groups (`sdy.sharding_group %v group_id=K`).

torch_xla's `xs.shard_as(x, y)` (JAX's `shard_alike`) lowers to one `@Sharding` custom call per
tensor, each `{unknown shard_as 0}`: no sharding of its own, only "the same as the others of
group 0". import-shardings reads only the placement of a string (its `==` ignores groups), so
without this pass the group would be lost and `y` left to propagation alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import ModuleError
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.walker import Site, sites

GROUP_OP = "sdy.sharding_group"


@dataclass(frozen=True)
class ImportShardingGroupsPass:
    """Puts each value whose `mhlo.sharding` names a shard group (`shard_as N` or `shard_like
    N`, on a func argument or result or an op result) into an `sdy.sharding_group`, one
    Shardy group per GSPMD (kind, N), numbered from 0 in the order first met. Shardy's groups
    are binding: a `shard_like` group (in GSPMD a mutual hint) is made as strict as
    `shard_as`. A group on a value Shardy cannot group (no ranked tensor; the module's
    `mhlo.spmd_*` attributes) is an error. Runs before import-shardings, which then imports the
    placement part of each string (`{unknown shard_as 0}`: an open constraint)."""

    NAME: ClassVar[str] = "import-sharding-groups"
    # Adds only `sdy.sharding_group` ops: no sharding string, no custom call, so the op index
    # the walk made (ir/analyses.py) holds for import-shardings after it.
    PRESERVES_ANALYSES: ClassVar[bool] = True

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        grouped = [s for s in sites(module, analyses=analyses) if "shard_" in s.text]
        members = [(site, k, g) for site in grouped for k, g in _groups(site)]
        if not members:
            return
        values = [_value(site, k) for site, k, _ in members]
        for (site, _, _), value in zip(members, values):
            _check_groupable(site, value)  # all checked before anything is rewritten
        ids: dict[tuple[str, int], int] = {}
        last_of_block: list = []  # (block, the last group made on its arguments)
        with module.context:
            for (site, _, group), value in zip(members, values):
                gid = ids.setdefault(group, len(ids))
                assert value is not None  # _check_groupable refused None
                _insert_group(value, gid, site, last_of_block)


def _groups(site: Site) -> list[tuple[int, tuple[str, int]]]:
    """(value index, (kind, N)) for each leaf of the site's sharding with a shard group."""
    sharding = site.parse()
    return [(k, leaf.shard_group) for k, leaf in enumerate(sharding.leaves()) if leaf.shard_group]


def _value(site: Site, k: int) -> ir.Value | None:
    """The value the k-th leaf of a site's sharding describes; None where there is none."""
    if site.kind == "arg":
        blocks = site.owner.regions[0].blocks
        return blocks[0].arguments[site.index] if len(blocks) and k == 0 else None
    if site.kind == "result":
        ret = _return_op(site.owner)
        return ret.operands[site.index] if ret is not None and k == 0 else None
    if site.kind == "op":
        results = site.owner.results
        return results[k] if k < len(results) else None
    return None


def _return_op(func: ir.Operation) -> ir.Operation | None:
    blocks = func.regions[0].blocks
    if not len(blocks):
        return None
    last = blocks[0].operations[len(blocks[0].operations) - 1]
    return last.operation if last.operation.name == "func.return" else None


def _check_groupable(site: Site, value: ir.Value | None) -> None:
    """A shard group Shardy can express sits on one ranked tensor value; anything else is an
    error, never a group dropped."""
    if value is None:
        raise ModuleError(
            f"shard group in {site.text!r} on no single value (a module attribute, a "
            "declaration, or a tuple element no value holds): Shardy's sharding groups "
            "take values",
            location=site.location,
        )
    if not isinstance(value.type, ir.RankedTensorType):
        raise ModuleError(
            f"shard group in {site.text!r} on a value of type {value.type}: Shardy's "
            "sharding groups take ranked tensors",
            location=site.location,
        )


def _insert_group(value: ir.Value, gid: int, site: Site, last_of_block: list) -> None:
    """`sdy.sharding_group %value group_id=gid` right after the value is defined; the groups
    of a block's arguments first in the block, in argument order."""
    owner = value.owner
    block = owner if isinstance(owner, ir.Block) else owner.operation.block
    op = ir.Operation.create(
        GROUP_OP,
        operands=[value],
        attributes={"group_id": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), gid)},
        loc=site.owner.location,
        ip=ir.InsertionPoint.at_block_begin(block),
    )
    if not isinstance(owner, ir.Block):
        op.move_after(owner.operation)
        return
    previous = next((last for b, last in last_of_block if b == block), None)
    if previous is not None:
        op.move_after(previous)
    last_of_block[:] = [(b, last) for b, last in last_of_block if b != block] + [(block, op)]

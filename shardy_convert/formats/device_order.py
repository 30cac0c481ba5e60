"""A converted file's record of the devices it compiles on: the module attribute
`shardy_convert.device_order` (the device assignment, partition p on device order[p]).

A program placed whole on device k converts to one partition on the empty mesh
(passes/single_device_program.py), which says nothing of k: the pass returns k as a value
(`OnOneDevice`), and only a file written for a reader keeps it, here. In process, the plugin
takes the value into its compile options and nothing is written."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.bindings import ir

ATTRIBUTE = "shardy_convert.device_order"


def read(module: ir.Operation) -> tuple[int, ...] | None:
    """The device order a converted file records, or None."""
    attrs = module.attributes
    return tuple(ir.DenseI64ArrayAttr(attrs[ATTRIBUTE])) if ATTRIBUTE in attrs else None


def write(module: ir.Operation, order: Sequence[int]) -> None:
    """Records `order` on the module (its context current or not)."""
    with module.context:
        module.attributes[ATTRIBUTE] = ir.DenseI64ArrayAttr.get(list(order))


def take(module: ir.Operation) -> tuple[int, ...] | None:
    """The recorded order, removed from the module (a reader that places it elsewhere)."""
    order = read(module)
    if order is not None:
        del module.attributes[ATTRIBUTE]
    return order

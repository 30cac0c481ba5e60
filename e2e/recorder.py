"""A hook for the e2e runs: the wrapper's own hook, plus a record of what the real plugin was
handed for each compile (the program's form, whether it carries only Shardy, the options)."""

from __future__ import annotations

import struct

from shardy_convert.converter import is_shardy
from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context
from shardy_convert.ir.walker import sites
from shardy_convert.plugin import compile_options, wrapper

RECORDS: list[dict] = []


def describe(code: bytes, form: bytes, options: bytes, order: bytes) -> dict:
    """What a plugin receives: only Shardy means a Shardy module (an sdy mesh, or the round-trip
    form) with no GSPMD string left outside Shardy's own round-trip attributes."""
    with new_context() as ctx:
        mod = formats.load(code, ctx, trusted=True)
        shardy = is_shardy(mod.operation)
        attrs = mod.operation.attributes
        name = str(attrs["sym_name"]).strip('"') if "sym_name" in attrs else None
        gspmd_only = [s.text for s in sites(mod.operation)] if not shardy else []
    opts = compile_options.decode(options)
    return {
        "name": name,
        "format": form.decode(),
        "form": formats.detect(code),
        "shardy": shardy,
        "gspmd": gspmd_only[:3],
        "use_shardy_partitioner": opts.use_shardy_partitioner,
        "num_partitions": opts.num_partitions,
        "device_assignment": list(opts.device_assignment or ()),
        "order": list(struct.unpack(f"<{len(order) // 4}i", order)),
    }


def on_compile(code: bytes, form: bytes, options: bytes):
    answer = wrapper.on_compile(code, form, options)
    if isinstance(answer, str):
        RECORDS.append({"error": answer, "received": form.decode()})
    else:
        RECORDS.append({**describe(*answer[:4]), "received": form.decode()})
    return answer


def raising_hook(code: bytes, form: bytes, options: bytes):
    """A hook that fails: the error must come back as a Python exception in torch_xla."""
    raise RuntimeError("this hook always fails")

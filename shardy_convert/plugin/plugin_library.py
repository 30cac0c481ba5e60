"""Whether a file is a PJRT plugin: an ELF shared library whose dynamic symbol table defines
`GetPjrtApi`, and not shardy-convert's own wrapper (any build of it: it defines MARKER), which
wrapping itself would load itself forever. Read from the file's headers, never loaded (loading
runs the library's code)."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

from ..errors import ShardyConvertError

ENTRY = b"GetPjrtApi"
MARKER = b"ShardyConvertPjrtWrapper"  # defined by _wrapper/pjrt_shardy_wrapper.c
# OpenXLA's CPU plugin from PyPI (`pip install xla-cpu-pjrt`, in the `test` extra): its package
# has no function that names the library, so this one does, for users and tests alike.
CPU_PLUGIN_PACKAGE = "xla_plugins.xla_cpu_pjrt"
CPU_PLUGIN_FILE = "xla_cpu_pjrt.so"
_SHT_DYNSYM = 11
_STT_FUNC = 2
# (section header, symbol) layouts of ELF32 and ELF64, keyed by EI_CLASS.
_LAYOUT = {
    1: dict(shoff=(0x20, "I"), shentsize=(0x2E, "H"), shnum=(0x30, "H"),
            section="IIIIIIIIII", symbol="IIIBBH", sym_name=0, sym_info=3, sym_shndx=5),
    2: dict(shoff=(0x28, "Q"), shentsize=(0x3A, "H"), shnum=(0x3C, "H"),
            section="IIQQQQIIQQ", symbol="IBBHQQ", sym_name=0, sym_info=1, sym_shndx=3),
}  # fmt: skip


def cpu_plugin_path() -> str:
    """The path of OpenXLA's CPU PJRT plugin, `xla_cpu_pjrt.so` of the installed `xla-cpu-pjrt`
    (a real plugin to run `use_plugin` or `plugin-wrapper` on without an accelerator);
    ShardyConvertError where that package is not installed."""
    try:
        spec = importlib.util.find_spec(CPU_PLUGIN_PACKAGE)
    except ImportError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ShardyConvertError(
            "OpenXLA's CPU PJRT plugin is not installed: pip install xla-cpu-pjrt "
            f"(no Python package {CPU_PLUGIN_PACKAGE})"
        )
    for root in spec.submodule_search_locations:
        candidate = Path(root) / CPU_PLUGIN_FILE
        if candidate.is_file():
            return str(candidate)
    raise ShardyConvertError(f"the {CPU_PLUGIN_PACKAGE} package holds no {CPU_PLUGIN_FILE}")


class _Malformed(Exception):
    pass


def why_not_a_plugin(path: str) -> str | None:
    """None when `path` is a PJRT plugin (or cannot be judged here: not an ELF platform, or a
    library without section headers); otherwise why it is not one, for the user."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open(path, "rb") as f:
            return _judge(f)
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    except (_Malformed, struct.error):
        return "not a shared library (a truncated or malformed ELF file)"


def _judge(f) -> str | None:
    ident = f.read(64)
    if ident[:4] != b"\x7fELF" or ident[4] not in _LAYOUT or ident[5] not in (1, 2):
        return "not a shared library (no ELF header)"
    order = "<" if ident[5] == 1 else ">"
    layout = _LAYOUT[ident[4]]
    if struct.unpack_from(order + "H", ident, 16)[0] != 3:  # e_type ET_DYN
        return "not a shared library (an ELF file of another type)"
    sections = _sections(f, ident, order, layout)
    if not sections:
        return None
    dynsym = [s for s in sections if s[1] == _SHT_DYNSYM]
    defined = _defined(f, order, layout, dynsym[0], sections) if dynsym else {}
    if defined.get(ENTRY) != _STT_FUNC:
        return f"a shared library that does not export {ENTRY.decode()} (not a PJRT plugin)"
    if MARKER in defined:
        return (
            f"shardy-convert's own PJRT plugin wrapper (it exports {MARKER.decode()}), not a "
            "plugin to wrap: give the plugin it should wrap (a wrapper around itself would load "
            "itself forever)"
        )
    return None


def _field(ident: bytes, order: str, spec: tuple[int, str]) -> int:
    offset, kind = spec
    return struct.unpack_from(order + kind, ident, offset)[0]


def _sections(f, ident: bytes, order: str, layout: dict) -> list[tuple]:
    shoff, size = _field(ident, order, layout["shoff"]), _field(ident, order, layout["shentsize"])
    count = _field(ident, order, layout["shnum"])
    fmt = order + layout["section"]
    if count == 0 or size < struct.calcsize(fmt):
        return []
    table = _read(f, shoff, size * count)
    return [struct.unpack_from(fmt, table, k * size) for k in range(count)]


def _read(f, offset: int, size: int) -> bytes:
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise _Malformed
    return data


def _defined(f, order: str, layout: dict, dynsym: tuple, sections: list[tuple]) -> dict:
    """{name: symbol type} of ENTRY and MARKER, where the dynamic symbol table defines them."""
    offset, size, link, entsize = dynsym[4], dynsym[5], dynsym[6], dynsym[9]
    if link >= len(sections) or entsize < struct.calcsize(order + layout["symbol"]):
        raise _Malformed
    strtab = _read(f, sections[link][4], sections[link][5])
    symbols = _read(f, offset, size)
    fmt = order + layout["symbol"]
    found = {}
    for k in range(size // entsize):
        sym = struct.unpack_from(fmt, symbols, k * entsize)
        name = sym[layout["sym_name"]]
        end = strtab.find(b"\0", name)
        wanted = strtab[name:end]
        if wanted in (ENTRY, MARKER) and sym[layout["sym_shndx"]] != 0:
            found[wanted] = sym[layout["sym_info"]] & 0xF
    return found

"""Named (V3) shardings XLA printed (testdata/v3, made by make_v3_testdata.py with jax 0.12)
convert to the program of their V2 twin: the converted module, compiled with the Shardy
partitioner on 8 CPU devices, places parameters and outputs as the twin compiled with GSPMD
does and computes the same values. The Shardy mesh keeps the V3 axis names and device order."""

from __future__ import annotations

import json
import re

import pytest

from shardy_convert import ShardyConvertError, convert
from shardy_convert.commands.check import Verdict, compare
from shardy_convert.ir import compat
from shardy_convert.sharding import parse

from ..conftest import TESTDATA

V3 = TESTDATA / "v3"
ENTRIES = json.loads((V3 / "manifest.json").read_text())
CASES = [pytest.param(e, id=e["case"]) for e in ENTRIES]
COMPILING = [pytest.param(e, id=e["case"]) for e in ENTRIES if e["compiles"]]
REDUCING = [
    pytest.param(e, k, id=f"{e['case']}-{k}")
    for e in ENTRIES
    if "unreduced=" in e["forms"]
    for k in ("v3_mlir", "v3_hlo", "v3_proto")
]
_MESH = re.compile(r"mesh\[((?:'[^']*'=\d+,?)*)\](?:, device_ids=\(([0-9,]+)\))?")


def _read(entry: dict, key: str) -> str:
    return (TESTDATA / entry["files"][key]).read_text()


def _v3_mesh(text: str) -> tuple[list[tuple[str, int]], list[int] | None]:
    """The (first) mesh the V3 strings of a module state, read off its text."""
    m = _MESH.search(text)
    axes = [(a.strip("'"), int(n)) for a, n in (x.split("=") for x in m.group(1).split(","))]
    return axes, [int(d) for d in m.group(2).split(",")] if m.group(2) else None


def test_testdata_covers_the_v3_forms():
    forms = {f for e in ENTRIES for f in e["forms"]}
    assert forms >= {"mesh", "device_ids", "sub-axis", "open", "replicated=", "tuple"}


@pytest.mark.parametrize("entry", CASES)
def test_every_v3_string_places_data_as_its_v2_twin(entry):
    """The twin is XLA's own V2 of each string (`v3_to_v2_sharding`), in the same places."""
    strings = [
        [s.replace("\\22", '"') for s in re.findall(r'mhlo\.sharding = "([^"]*)"', _read(entry, k))]
        for k in ("v3_mlir", "v2_mlir")
    ]
    assert len(strings[0]) == len(strings[1]) > 0
    for v3, v2 in zip(*strings):
        assert parse(v3).named is not None or "mesh[" not in v3
        assert parse(v3) == parse(v2), (v3, v2)


@pytest.mark.parametrize("entry", COMPILING)
def test_converted_v3_module_is_its_v2_twins_program(entry):
    n = entry["num_devices"]
    converted = convert(_read(entry, "v3_mlir"), num_devices=n)
    axes, device_ids = _v3_mesh(_read(entry, "v3_mlir"))
    mesh = ", ".join(f'"{a}"={size}' for a, size in axes)
    assert f"sdy.mesh @mesh = <[{mesh}]" in converted
    if device_ids:
        assert f"device_ids=[{', '.join(map(str, device_ids))}]" in converted
    report = compare(_read(entry, "v2_mlir"), converted, n)
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED), str(report)


@pytest.mark.parametrize("entry", COMPILING)
def test_v3_hlo_text_and_proto_convert_like_the_module(entry):
    """XLA's HLO text and HloProto of the same program: the same Shardy module."""
    n = entry["num_devices"]
    from_module = convert(_read(entry, "v3_mlir"), num_devices=n)
    text = convert(_read(entry, "v3_hlo"), num_devices=n)
    proto = convert((TESTDATA / entry["files"]["v3_proto"]).read_bytes(), num_devices=n)
    for converted in (text, proto.decode()):
        assert _shardy(converted) == _shardy(from_module)


@pytest.mark.parametrize(("entry", "key"), REDUCING)
def test_a_max_reduction_is_kept_or_refused_naming_the_jaxlib(entry, key):
    """XLA printed `unreduced=max{'model'}` (module, HLO text, HloProto alike): Shardy says
    `unreduced=max{"model"}` where the jaxlib's sdy has reduction kinds; elsewhere a located
    error names the jaxlib, never a silent sum."""
    path = TESTDATA / entry["files"][key]
    data = path.read_bytes() if key == "v3_proto" else path.read_text()
    if not compat.has_reduction_kinds():
        with pytest.raises(ShardyConvertError) as info:
            convert(data, num_devices=entry["num_devices"])
        assert info.value.location, str(info.value)
        assert f"jaxlib {compat.jaxlib_version()} cannot" in str(info.value)
        return
    converted = convert(data, num_devices=entry["num_devices"], emit="text")
    text = converted.decode() if isinstance(converted, bytes) else converted
    assert 'unreduced=max{"model"}' in text


def _shardy(module: str) -> list[str]:
    """The sdy.mesh ops and sharding attributes of a module, in order."""
    return re.findall(r"sdy\.mesh @\w+ = <[^>]*>|#sdy\.sharding\w*<[^\n]*?>(?=[,}\s)])", module)

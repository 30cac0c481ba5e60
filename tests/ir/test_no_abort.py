"""jaxlib calls that abort the process are never reached with user input.

DESIGN.md "Hazards in jaxlib": `HloSharding.get_axis_sizes()` aborts on non-identity V1
lists, `is_tile_assignment_iota()` on tuples, `from_string` pads short lists and accepts
duplicate ids. The proof, in a fresh interpreter: every member of jaxlib's `HloSharding` and
`OpSharding` (and of `hlo_sharding_util`) is replaced by a recording wrapper, then hostile
inputs go through `convert`, the dump path, the pre-compile hook and the CLI's own `main`
(once, with the wrappers in place from the start).
Nothing may be recorded, and `jax` / `jaxlib.xla_client` are never even imported. A control
call at the end shows the wrappers do record (`sys.setprofile` would not: nanobind functions
raise no `c_call` events, so a profiler-based check would pass vacuously).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import TESTDATA

HAZARDS = [
    "HloSharding.get_axis_sizes",
    "HloSharding.is_tile_assignment_iota",
    "HloSharding.from_string",
    "HloSharding.from_proto",
    "HloSharding.tuple_elements",
    "HloSharding.tile_assignment_devices",
    "HloSharding.to_proto",
    "OpSharding.ParseFromString",
]

# Shardings XLA's own code aborts on or silently misreads (DESIGN.md), plus malformed ones.
HOSTILE_SHARDINGS = [
    "{devices=[2,2]0,2,1,3}",
    "{devices=[4,2]7,6,5,4,3,2,1,0}",
    "{devices=[2,3]<=[2,3]T(1,0)}",
    "{{devices=[2,2]0,2,1,3}, {replicated}}",
    "{devices=[2,2]0,1,2}",
    "{devices=[2,2]0,0,1,2}",
    "{devices=[2,2]0,1,2,9}",
    "{devices=[3]<=[2]}",
    "{devices=[2,2]<=[4] last_tile_dim_replicate last_tile_dims={manual}}",
    "{devices=[1000000000]<=[1000000000]}",
    "{devices=[2,6291456]<=[4194304,3]T(1,0) last_tile_dim_replicate}",
    "{" * 10_000,
    "{maximal device=-1}",
]

_PROBE = r"""
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
from tests import fuzz_inputs as fi

shardings = json.loads(sys.argv[2])
testdata = sys.argv[3]
calls = []

def record(name, original):
    def wrapper(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)
    return wrapper

def wrap_members(owner, prefix):
    for name in dir(owner):
        if name.startswith("__") and name != "__init__":
            continue
        member = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name)
        kind = type(member).__name__
        if kind == "nb_method" or (kind == "nb_func" and name == "__init__"):
            setattr(owner, name, record(f"{prefix}.{name}", member))
        elif kind == "nb_func":
            wrapped = record(f"{prefix}.{name}", member)
            setattr(owner, name, staticmethod(wrapped) if isinstance(owner, type) else wrapped)

def corpus():
    from pathlib import Path
    from shardy_convert import convert
    from shardy_convert.formats import dump
    from shardy_convert.cli.main import main
    from shardy_convert.errors import ShardyConvertError
    from shardy_convert.hook import Hook

    inputs = []
    for text in shardings:
        for kind in ("arg", "result", "op"):
            module, _ = fi.module_with([(kind, text, (8, 8))])
            inputs.append(module)
    for family in list(fi.MODULE_FAMILIES) + list(fi.DUMP_FAMILIES):
        for seed in range(3):
            inputs.append(fi.case(family, seed).data)
    good = [p.read_text() for p in sorted(Path(testdata).glob("*/*.mlir"))]
    hook = Hook(on_error="passthrough")
    for data in inputs + good:
        try:
            if isinstance(data, str) and "## BEGIN_GRAPH" in data:
                dump.transform(data, lambda g: convert(g.text))
            else:
                convert(data)
                hook(data)
        except ShardyConvertError:
            pass
    portable = convert(good[0], emit="portable")
    convert(portable)
    try:
        convert(portable[: len(portable) // 2])
    except ShardyConvertError:
        pass
    import tempfile

    paths = [str(p) for p in sorted(Path(testdata).glob("torch_xla/*"))]
    try:
        main(["convert", *paths, "-o", tempfile.mkdtemp()], standalone_mode=False)
    except SystemExit:
        pass

import shardy_convert.converter  # noqa: the library, before any probe
from shardy_convert.xla import compat

# The wrappers go in before the corpus runs once: its first run is the one that reaches
# jaxlib, if anything does (parse and the passes cache what they have seen). Wrapping imports
# neither jax nor xla_client (the control below imports nothing new either).
hlo = compat.hlo_sharding_module()
util = importlib.import_module("jaxlib._jax.hlo_sharding_util")
wrap_members(hlo.HloSharding, "HloSharding")
wrap_members(hlo.OpSharding, "OpSharding")
wrap_members(util, "hlo_sharding_util")
corpus()
imported = sorted(m for m in ("jax", "jaxlib.xla_client") if m in sys.modules)
hostile_calls = sorted(set(calls))

calls.clear()
s = hlo.HloSharding.from_string("{devices=[2,2]<=[4]}")
s.get_axis_sizes(); s.is_tile_assignment_iota(); s.tile_assignment_devices()
proto = s.to_proto(); hlo.HloSharding.from_proto(proto); s.tuple_elements()
hlo.OpSharding().ParseFromString(proto.SerializeToString())
control = sorted(set(calls))
print(json.dumps({"imported": imported, "calls": hostile_calls, "control": control}))
"""


@pytest.fixture(scope="module")
def probe() -> dict:
    root = str(TESTDATA.parent)
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, root, json.dumps(HOSTILE_SHARDINGS), str(TESTDATA)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_convert_path_never_imports_jax_or_xla_client(probe):
    assert probe["imported"] == []


@pytest.mark.parametrize("hazard", HAZARDS)
def test_a_hazardous_jaxlib_call_is_never_reached(probe, hazard):
    assert hazard in probe["control"], "the probe does not see this call: the test would be void"
    assert hazard not in probe["calls"]


def test_nothing_of_jaxlibs_sharding_classes_is_called(probe):
    assert probe["calls"] == []

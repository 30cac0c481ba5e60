#!/usr/bin/env python3
"""Generate the named (V3) sharding test inputs of shardy-convert: XLA itself prints them.

Every file under testdata/v3/ is produced here by real XLA runs on the CPU with jax/jaxlib
0.12.0.1 (Python >= 3.12), never written by hand:

    python testdata/make_v3_testdata.py              # every case, then verify
    python testdata/make_v3_testdata.py --only device_ids
    python testdata/make_v3_testdata.py --list

Needs jax==0.12.0.1 jaxlib==0.12.0.1 numpy (and this repository on PYTHONPATH for --verify):
the venv of `make test-newest`, or `python3.12 -m venv v && v/bin/pip install jax==0.12.0.1`.

Each case is compiled with the Shardy partitioner in a child process of its own, with
`XLA_FLAGS=--xla_enable_hlo_sharding_v3=true --xla_dump_to=DIR --xla_dump_hlo_as_text
--xla_dump_hlo_as_proto`: XLA then writes the program's shardings into the HLO it dumps before
optimizing as named (V3) strings, with the mesh's axis names and device order. A case is either
a JAX program (jax.jit with NamedShardings) or a Shardy module built here from a few
parameters and compiled by jaxlib's client (for what JAX does not lower: a mesh with
device_ids, sub-axes, explicit replicated axes, two meshes in one module).

Outputs (a contract, read by the tests):
  v3/<name>.v3.hlo.txt  XLA's `before_optimizations` HLO text: every sharding a V3 string.
                        Absolute paths in its stack-frame tables and metadata are rewritten
                        to repository-relative ones.
  v3/<name>.v3.hlo.pb   the HloProto XLA dumps beside it (OpSharding.named_sharding set).
  v3/<name>.v2.hlo.txt  the same text with each sharding replaced by XLA's own V2 of it
                        (`HloSharding.v3_to_v2_sharding()`): the V2 twin.
  v3/<name>.v3.mlir     the V3 text through XLA's importer (`hlo_to_stablehlo`, then
  v3/<name>.v2.mlir     `mhlo_to_stablehlo`), with `mhlo.num_partitions`: StableHLO whose
                        `mhlo.sharding` strings are what XLA prints; likewise the V2 twin,
                        which GSPMD compiles.
  v3/manifest.json      one entry per case: files, devices, description, the V3 forms seen.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SELF_REL = "testdata/make_v3_testdata.py"
OUT = os.path.join(HERE, "v3")
MANIFEST = os.path.join(OUT, "manifest.json")
NUM_DEVICES = 8


class Case:
    def __init__(self, name, kind, fn, description):
        self.name = name
        self.kind = kind  # "jax" | "sdy" | "sdy_dump" (dumped, then refused by the compiler)
        self.fn = fn
        self.description = description


CASES: dict[str, Case] = {}


def case(name, kind, description):

    def deco(fn):
        CASES[name] = Case(name, kind, fn, description)
        return fn

    return deco


# --------------------------------------------------------------------------------------
# JAX programs (run in the child: XLA_FLAGS already set)
# --------------------------------------------------------------------------------------


def _mesh(shape, names):
    """A mesh of Auto axes (JAX 0.12 makes Explicit ones by default, which constraints refuse)."""
    import jax

    return jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


@case(
    "matmul_2x4",
    "jax",
    "jax.jit on mesh (2, 4) ('data', 'model'): x P('data', 'model'), w P('model', None), "
    "a constraint P('model', None) on x @ w, outputs P(None, 'model') and P()",
)
def jax_matmul_2x4():
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((2, 4), ("data", "model"))

    def s(*spec):
        return NamedSharding(mesh, P(*spec))

    def matmul_2x4(x, w):
        y = jax.lax.with_sharding_constraint(x @ w, s("model", None))
        return jnp.tanh(y), y.sum(0)

    f = jax.jit(
        matmul_2x4,
        in_shardings=(s("data", "model"), s("model", None)),
        out_shardings=(s(None, "model"), s()),
    )
    f(jnp.ones((8, 16)), jnp.ones((16, 32)))


@case(
    "mesh3d_open",
    "jax",
    "jax.jit on mesh (2, 2, 2) ('x', 'y', 'z'): a P(('x', 'y'), 'z'), b P('z', None), a "
    "constraint P(('x', 'y'), UNCONSTRAINED) (an open dim), outputs P('x', 'y') and P()",
)
def jax_mesh3d_open():
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((2, 2, 2), ("x", "y", "z"))

    def s(*spec):
        return NamedSharding(mesh, P(*spec))

    def mesh3d_open(a, b):
        c = jax.lax.with_sharding_constraint(a @ b, s(("x", "y"), P.UNCONSTRAINED))
        return jnp.sin(c) * 2, c.sum()

    f = jax.jit(
        mesh3d_open,
        in_shardings=(s(("x", "y"), "z"), s("z", None)),
        out_shardings=(s("x", "y"), s()),
    )
    f(jnp.ones((8, 16)), jnp.ones((16, 8)))


@case(
    "transposed_specs",
    "jax",
    "jax.jit on mesh (2, 4) ('data', 'model'): specs that read the mesh transposed, "
    "P('model', 'data') and P(('model', 'data'), None), output P(None, ('data', 'model'))",
)
def jax_transposed_specs():
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((2, 4), ("data", "model"))

    def s(*spec):
        return NamedSharding(mesh, P(*spec))

    def transposed_specs(a, b):
        return (a + b.T) * 3

    f = jax.jit(
        transposed_specs,
        in_shardings=(s("model", "data"), s(None, ("model", "data"))),
        out_shardings=s(None, ("data", "model")),
    )
    f(jnp.ones((8, 8)), jnp.ones((8, 8)))


# --------------------------------------------------------------------------------------
# Shardy modules built here, compiled by jaxlib's client
# --------------------------------------------------------------------------------------


def _sdy_module(name, meshes, args, result, body):
    """A Shardy module: `meshes` {name: mesh text}, `args` [(type, sharding)], one result."""
    head = "\n".join("  sdy.mesh @{} = {}".format(*kv) for kv in meshes.items())
    params = ", ".join(
        "%%arg%d: %s {sdy.sharding = #sdy.sharding%s}" % (k, t, s) for k, (t, s) in enumerate(args)
    )
    rtype, rsharding = result
    return (
        "module @%s attributes {mhlo.num_partitions = %d : i32} {\n%s\n"
        "  func.func public @main(%s) -> (%s {sdy.sharding = #sdy.sharding%s}) {\n%s\n  }\n}\n"
        % (name, NUM_DEVICES, head, params, rtype, rsharding, body)
    )


@case(
    "device_ids",
    "sdy",
    "a Shardy module on mesh ['data'=2, 'model'=4] with device_ids=[3,6,0,5,1,7,2,4]: "
    "[{'data'}, {'model'}], [{'model'}, {}] replicated={'data'}, a constraint on sub-axes "
    "[{'model':(1)2}, {'model':(2)2, ?}], result [{'data', 'model'}, {}]",
)
def sdy_device_ids():
    return _sdy_module(
        "device_ids",
        {"mesh": '<["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>'},
        [
            ("tensor<8x16xf32>", '<@mesh, [{"data"}, {"model"}]>'),
            ("tensor<16x8xf32>", '<@mesh, [{"model"}, {}], replicated={"data"}>'),
        ],
        ("tensor<8x8xf32>", '<@mesh, [{"data", "model"}, {}]>'),
        "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
        "(tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>\n"
        '    %1 = sdy.sharding_constraint %0 <@mesh, [{"model":(1)2}, {"model":(2)2, ?}]> : '
        "tensor<8x8xf32>\n"
        "    %2 = stablehlo.tanh %1 : tensor<8x8xf32>\n"
        "    return %2 : tensor<8x8xf32>",
    )


@case(
    "sub_axes",
    "sdy",
    "a Shardy module on mesh ['x'=8]: [{'x':(1)2}, {'x':(2)4}] and [{'x':(1)4}, {'x':(4)2}] "
    "added, result [{'x'}, {}]",
)
def sdy_sub_axes():
    return _sdy_module(
        "sub_axes",
        {"mesh": '<["x"=8]>'},
        [
            ("tensor<8x8xf32>", '<@mesh, [{"x":(1)2}, {"x":(2)4}]>'),
            ("tensor<8x8xf32>", '<@mesh, [{"x":(1)4}, {"x":(4)2}]>'),
        ],
        ("tensor<8x8xf32>", '<@mesh, [{"x"}, {}]>'),
        "    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>\n"
        "    %1 = stablehlo.multiply %0, %arg0 : tensor<8x8xf32>\n"
        "    return %1 : tensor<8x8xf32>",
    )


@case(
    "reversed_order",
    "sdy",
    "a Shardy module with two meshes over the devices in reverse order, ['p'=2, 'q'=4] and "
    "['a'=8], both device_ids=[7,6,5,4,3,2,1,0]: [{'p'}, {'q'}], [{'a'}, {}], result "
    "[{'q'}, {'p'}] (XLA writes every V3 string on the first mesh: [{'a'}, {}] is "
    "[{'p', 'q'}, {}])",
)
def sdy_reversed_order():
    order = "device_ids=[7, 6, 5, 4, 3, 2, 1, 0]"
    return _sdy_module(
        "reversed_order",
        {"mesh": f'<["p"=2, "q"=4], {order}>', "flat": f'<["a"=8], {order}>'},
        [
            ("tensor<8x8xf32>", '<@mesh, [{"p"}, {"q"}]>'),
            ("tensor<8x8xf32>", '<@flat, [{"a"}, {}]>'),
        ],
        ("tensor<8x8xf32>", '<@mesh, [{"q"}, {"p"}]>'),
        "    %0 = stablehlo.subtract %arg0, %arg1 : tensor<8x8xf32>\n"
        "    return %0 : tensor<8x8xf32>",
    )


@case(
    "reduction_max",
    "sdy_dump",
    "a Shardy module whose argument is unreduced with a max reduction, [{'data'}, {}] "
    "unreduced=max{'model'} on mesh ['data'=2, 'model'=4]: XLA prints it, then refuses to "
    "compile the program (it drops the unreduced axis without a reshard); no compile check",
)
def sdy_reduction_max():
    return _sdy_module(
        "reduction_max",
        {"mesh": '<["data"=2, "model"=4]>'},
        [("tensor<8x16xf32>", '<@mesh, [{"data"}, {}], unreduced=max{"model"}>')],
        ("tensor<8x16xf32>", '<@mesh, [{"data"}, {}]>'),
        "    %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>\n    return %0 : tensor<8x16xf32>",
    )


def _compile_sdy(text):
    import jax
    import numpy as np
    from jax._src.lib import xla_client as xc

    opts = xc.CompileOptions()
    build = opts.executable_build_options
    build.num_partitions = NUM_DEVICES
    build.num_replicas = 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    build.device_assignment = xc.DeviceAssignment.create(np.arange(NUM_DEVICES).reshape(1, -1))
    devices = jax.devices()[:NUM_DEVICES]
    devices[0].client.compile_and_load(text, xc.DeviceList(tuple(devices)), opts)


def child(name):
    c = CASES[name]
    if c.kind == "jax":
        c.fn()
    else:
        _compile_sdy(c.fn())  # "sdy_dump": raises after XLA dumped the module


# --------------------------------------------------------------------------------------
# The parent: dumps -> files
# --------------------------------------------------------------------------------------


def run_child(c, workdir, log):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "JAX_"))}
    env["JAX_PLATFORMS"] = "cpu"
    env["TF_CPP_MIN_LOG_LEVEL"] = "1"
    env["XLA_FLAGS"] = (
        "--xla_force_host_platform_device_count=%d --xla_enable_hlo_sharding_v3=true "
        "--xla_dump_to=%s --xla_dump_hlo_as_text --xla_dump_hlo_as_proto" % (NUM_DEVICES, workdir)
    )
    # Run this file by its path relative to the repository root: JAX records the file names
    # of its stack frames in the dump.
    boot = (
        f"p = {SELF_REL!r}; ns = {{'__name__': 'make_v3_testdata', '__file__': p}}; "
        f"exec(compile(open(p).read(), p, 'exec'), ns); ns['child']({c.name!r})"
    )
    t0 = time.time()
    p = subprocess.run(
        [sys.executable, "-c", boot],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log.write("=== %s (rc=%d, %.1fs)\n%s\n" % (c.name, p.returncode, time.time() - t0, p.stdout))
    if p.returncode != 0 and c.kind != "sdy_dump":
        raise RuntimeError("child exited %d:\n%s" % (p.returncode, p.stdout[-2000:]))
    found = glob.glob(os.path.join(workdir, f"module_*{c.name}.before_optimizations.txt"))
    found = [f for f in found if re.search(rf"\.(jit_)?{re.escape(c.name)}\.before", f)]
    if len(found) != 1:
        raise RuntimeError(f"expected one before_optimizations dump of {c.name}, found {found}")
    return found[0]


def shardings(text):
    """(start, end) of each `sharding={...}` value in HLO text (balanced braces, quotes)."""
    spans = []
    for m in re.finditer(r"\bsharding=\{", text):
        depth, k, quote = 0, m.end() - 1, None
        while True:
            ch = text[k]
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        spans.append((m.end() - 1, k + 1))
    return spans


def v2_twin(text):
    """`text` with every sharding replaced by XLA's V2 of it (v3_to_v2_sharding)."""
    from jax._src.lib import xla_client as xc

    out, last = [], 0
    for start, end in shardings(text):
        v2 = xc.HloSharding.from_string(text[start:end]).v3_to_v2_sharding()
        out += [text[last:start], _with_reduction(v2)]
        last = end
    return "".join([*out, text[last:]])


def _with_reduction(v2):
    """XLA's V2 text of a sharding, with the reduction its proto carries as OpMetadata (XLA's
    printer leaves metadata out): `metadata={op_type="sdy::reduction_op" op_name="MAX"}`."""
    elements = v2.tuple_elements()
    if elements:
        return "{" + ", ".join(_with_reduction(e) for e in elements) + "}"
    name = {1: "MAX", 2: "MIN"}.get(v2.reduction_op())
    text = str(v2)
    if name is None:
        return text
    return text[:-1] + f' metadata={{op_type="sdy::reduction_op" op_name="{name}"}}}}'


def relative_paths(text):
    """Absolute file names in the dump's stack-frame tables and metadata -> relative ones."""
    return text.replace(ROOT + os.sep, "")


def to_mlir(hlo_text):
    """XLA's importer on HLO text: StableHLO text with `mhlo.num_partitions`."""
    from jaxlib import _hlo, _jax
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import sdy, stablehlo

    proto = bytes(_hlo.hlo_module_from_text(hlo_text).as_serialized_hlo_module_proto())
    bytecode = bytes(_jax.mlir.mhlo_to_stablehlo(bytes(_jax.mlir.hlo_to_stablehlo(proto))))
    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    stablehlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    module = ir.Module.parse(bytecode, context=ctx)
    i32 = ir.IntegerType.get_signless(32, ctx)
    module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, NUM_DEVICES)
    return str(module)


def v3_forms(text):
    forms = set()
    for start, end in shardings(text):
        s = text[start:end]
        checks = {
            "mesh": "mesh[" in s,
            "device_ids": "device_ids=" in s,
            "sub-axis": "':(" in s,
            "open": "?" in s,
            "replicated=": "replicated={" in s,
            "unreduced=": "unreduced=" in s,
            "manual=": "manual={" in s,
            "keyword replicated": re.search(r"\], replicated\}", s),
            "tuple": s.startswith("{{"),
        }
        forms.update(k for k, v in checks.items() if v)
    return sorted(forms)


def produce(c, log):
    workdir = tempfile.mkdtemp(prefix=f"mkv3-{c.name}-")
    dump = run_child(c, workdir, log)
    with open(dump) as f:
        v3 = relative_paths(f.read())
    with open(dump[: -len(".txt")] + ".hlo.pb", "rb") as f:
        proto = f.read()
    v2 = v2_twin(v3)
    files = {
        "v3_hlo": f"v3/{c.name}.v3.hlo.txt",
        "v3_proto": f"v3/{c.name}.v3.hlo.pb",
        "v2_hlo": f"v3/{c.name}.v2.hlo.txt",
        "v3_mlir": f"v3/{c.name}.v3.mlir",
        "v2_mlir": f"v3/{c.name}.v2.mlir",
    }
    contents = {"v3_hlo": v3, "v2_hlo": v2, "v3_mlir": to_mlir(v3), "v2_mlir": to_mlir(v2)}
    os.makedirs(OUT, exist_ok=True)
    for key, rel in files.items():
        mode, data = ("wb", proto) if key == "v3_proto" else ("w", contents[key])
        with open(os.path.join(HERE, rel), mode) as f:
            f.write(data)
    return {
        "case": c.name,
        "num_devices": NUM_DEVICES,
        "description": c.description,
        "files": files,
        "forms": v3_forms(v3),
        "compiles": c.kind != "sdy_dump",
    }


def verify():
    """Each V3 string of every case reads (shardy_convert's parser) as its V2 twin places."""
    sys.path.insert(0, ROOT)
    from shardy_convert.sharding import parse

    with open(MANIFEST) as f:
        entries = json.load(f)
    ok = True
    for e in entries:
        with open(os.path.join(HERE, e["files"]["v3_hlo"])) as f:
            v3 = f.read()
        with open(os.path.join(HERE, e["files"]["v2_hlo"])) as f:
            v2 = f.read()
        a = [v3[s:t] for s, t in shardings(v3)]
        b = [v2[s:t] for s, t in shardings(v2)]
        bad = [(x, y) for x, y in zip(a, b) if parse(x) != parse(y)]
        ok &= len(a) == len(b) and not bad
        print("%-18s %2d V3 strings %s" % (e["case"], len(a), "ok" if not bad else bad[:1]))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="cases to (re)generate")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("--verify-only", action="store_true")
    ap.add_argument("--log", default=os.path.join(tempfile.gettempdir(), "make_v3_testdata.log"))
    a = ap.parse_args()
    if a.list:
        for c in CASES.values():
            print("%-18s %-4s %s" % (c.name, c.kind, c.description))
        return
    if not a.verify_only:
        names = a.only or list(CASES)
        unknown = [n for n in names if n not in CASES]
        if unknown:
            ap.error("unknown case(s): {} (see --list)".format(", ".join(unknown)))
        entries = []
        if os.path.exists(MANIFEST):
            with open(MANIFEST) as f:
                entries = [e for e in json.load(f) if e["case"] not in names and e["case"] in CASES]
        with open(a.log, "a") as log:
            for name in names:
                t0 = time.time()
                entries.append(produce(CASES[name], log))
                print("%-18s ok  %4.1fs" % (name, time.time() - t0))
        entries.sort(key=lambda e: e["case"])
        with open(MANIFEST, "w") as f:
            json.dump(entries, f, indent=1)
            f.write("\n")
    if not verify():
        sys.exit(1)


if __name__ == "__main__":
    main()

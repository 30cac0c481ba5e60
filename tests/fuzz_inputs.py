"""Hostile inputs for the fuzz tests: malformed sharding strings, modules, bytecode and dumps.

Every generator takes a `random.Random`, so a seed (fixed, or drawn by hypothesis with
`derandomize=True`) gives the same input on every run. Modules are returned with what their
error must say (`Case.expect`) and where (`Case.line`), so the tests can check messages.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from tests.conftest import TESTDATA
from tests.random_shardings import iota_text, random_sharding, random_tile_attributes

# --- sharding strings ---------------------------------------------------------------------------

_TOKENS = (
    *"{}[]<=T(),0123456789 -\n\"'\\",
    "devices=",
    "device=",
    "<=[",
    "T(",
    "last_tile_dim_replicate",
    "last_tile_dims={",
    "manual",
    "replicated",
    "maximal",
    "unknown",
    "unreduced",
    "metadata={",
    "op_name=",
    "shard_as ",
    "shard_like ",
    "/*",
    "*/",
    "//",
    "\x00",
    "\xff",
    "é",
    "\u200b",
)


def _dims(rng: random.Random, max_devices: int = 64) -> list[int]:
    while True:
        dims = [rng.choice((1, 2, 2, 3, 4, 8)) for _ in range(rng.randint(1, 4))]
        if 2 <= math.prod(dims) <= max_devices:
            return dims


def _ints(values) -> str:
    return ",".join(map(str, values))


def truncated(rng: random.Random) -> str:
    """A valid string cut short, anywhere but at its end."""
    valid = random_sharding(rng)
    return valid[: rng.randrange(1, len(valid))]


def wrong_list_length(rng: random.Random) -> str:
    dims = _dims(rng)
    n = math.prod(dims)
    ids = rng.sample(range(n), n)
    if rng.random() < 0.5:
        ids = ids[: rng.randrange(0, n)]
    else:
        ids += rng.sample(range(n), rng.randint(1, n))
    return f"{{devices=[{_ints(dims)}]{_ints(ids)}}}" if ids else f"{{devices=[{_ints(dims)}]}}"


def duplicate_ids(rng: random.Random) -> str:
    dims = _dims(rng)
    n = math.prod(dims)
    ids = rng.sample(range(n), n)
    i, j = rng.sample(range(n), 2)
    ids[i] = ids[j]
    tail = rng.choice(("", " last_tile_dim_replicate")) if len(dims) > 1 else ""
    return f"{{devices=[{_ints(dims)}]{_ints(ids)}{tail}}}"


_BAD_IDS = (-1, -(2**63), 2**31, 2**63 - 1, 2**63, 2**64, 10**30)


def out_of_range_ids(rng: random.Random) -> str:
    dims = _dims(rng)
    n = math.prod(dims)
    ids = rng.sample(range(n), n)
    ids[rng.randrange(n)] = rng.choice((n, n + rng.randint(1, 100), *_BAD_IDS))
    if rng.random() < 0.2:
        return f"{{maximal device={rng.choice(_BAD_IDS)}}}"
    return f"{{devices=[{_ints(dims)}]{_ints(ids)}}}"


def bad_transpose(rng: random.Random) -> str:
    dims = _dims(rng)
    reshape = _dims(rng, 4096) if rng.random() < 0.3 else _factor(math.prod(dims), rng)
    k = len(reshape)
    perm = rng.choice(
        (
            [0] * k,
            list(range(k + 1)),
            list(range(k - 1)),
            [*range(k - 1), k],
            [-1, *range(1, k)],
            [],
            [2**63],
        )
    )
    body = f"<=[{_ints(reshape)}]" + (f"T({_ints(perm)})" if rng.random() < 0.9 else "")
    if k == 1 or rng.random() < 0.1:
        body = f"<=[{math.prod(dims)}]T({_ints(perm or [0])})"
    return f"{{devices=[{_ints(dims)}]{body}}}"


def _factor(n: int, rng: random.Random) -> list[int]:
    dims = []
    while n > 1:
        d = rng.choice([d for d in range(2, n + 1) if n % d == 0])
        dims.append(d)
        n //= d
    return dims if len(dims) > 1 else [*dims, 1]


def product_mismatch(rng: random.Random) -> str:
    dims = _dims(rng)
    n = math.prod(dims)
    reshape = _factor(n * rng.choice((2, 3)), rng) if rng.random() < 0.5 else _factor(n, rng)
    if math.prod(reshape) == n:
        reshape[rng.randrange(len(reshape))] += 1
    perm = rng.sample(range(len(reshape)), len(reshape))
    return f"{{devices=[{_ints(dims)}]{iota_text(reshape, perm)}}}"


def last_tile_conflicts(rng: random.Random) -> str:
    dims = _dims(rng)
    n = math.prod(dims)
    tiles = f"devices=[{_ints(dims)}]<=[{n}]"
    extra = rng.choice(
        (
            "last_tile_dim_replicate last_tile_dims={replicated}",
            "last_tile_dims={manual} last_tile_dim_replicate",
            "last_tile_dim_replicate last_tile_dim_replicate",
            "last_tile_dims={" + ", ".join(["manual"] * (len(dims) + 1)) + "}",
            "last_tile_dims={bogus}",
            "last_tile_dims={manual,}",
            "last_tile_dims=manual",
            "last_tile_dims={manual} last_tile_dims={replicated}",
        )
    )
    if rng.random() < 0.2:
        return "{" + rng.choice(("replicated", "manual", "maximal device=0")) + " " + extra + "}"
    return "{" + tiles + " " + extra + "}"


_UNKNOWN = (
    "devcies=[2]0,1",
    "tiled",
    "Replicated",
    "last_tile_dim",
    "shard_as",
    "shard_like -1",
    "metadata={foo=1}",
    "metadata={op_name=1}",
    'metadata={op_name="x" op_name="y"}',
    "device=[2]",
    "devices",
    "replicated=1",
    "=",
    "𝔡evices=[2]0,1",
)


def unknown_keywords(rng: random.Random) -> str:
    attributes = random_tile_attributes(rng, 64)
    attributes.insert(rng.randrange(len(attributes) + 1), rng.choice(_UNKNOWN))
    return "{" + " ".join(attributes) + "}"


_HUGE = (10**9, 2**31, 2**32 + 1, 2**62, 2**63 - 1, 2**63, 2**64, 10**100, 0, -2)


def huge_sizes(rng: random.Random) -> str:
    """Sizes that must be refused before anything is allocated."""
    big = rng.choice(_HUGE)
    return rng.choice(
        (
            "{devices=[1000000000]<=[1000000000]}",
            f"{{devices=[{big}]<=[{big}]}}",
            f"{{devices=[{big},2]<=[2,{big}]T(1,0)}}",
            f"{{devices=[65536,65536]<=[{2**32}]}}",
            f"{{devices=[{big}]0,1}}",
            f"{{devices=[2,{big}]0,1 last_tile_dim_replicate}}",
            "{devices=[4096,8192]<=[8192,4096]T(1,0) last_tile_dims={manual}}",
            "{devices=[2,6291456]<=[4194304,3]T(1,0) last_tile_dim_replicate}",
            "{devices=[" + _ints([1] * rng.randint(65, 2000)) + "]0,1}",
            "{devices=[2,2]<=[" + _ints([1] * rng.randint(65, 2000)) + ",4]}",
            f"{{maximal device={big}}}",
            f"{{devices=[{big}]<=[{big}] shard_as {big}}}",
        )
    )


def tuples(rng: random.Random) -> str:
    depth = rng.choice((2, 3, 100, 10_000, 100_000))
    valid = random_sharding(rng, metadata=False)
    return rng.choice(
        (
            "{" * depth + "}" * depth,
            "{" * depth,
            "{{}}",
            "{,}",
            "{{replicated},}",
            "{{replicated} {manual}}",
            "{" + ", ".join([valid] * rng.randint(1, 3)) + ", {" + valid + "}}",
            "{" + ", ".join(["{replicated}"] * rng.randint(100, 500)) + ",}",
            "{" + valid,
            "{" + valid + ", " + "{" * depth + "}",
        )
    )


def garbage(rng: random.Random) -> str:
    """Random bytes read as Latin-1, random code points, or a soup of sharding tokens."""
    style = rng.random()
    n = rng.randint(1, 200)
    if style < 0.3:
        return bytes(rng.randrange(256) for _ in range(n)).decode("latin-1")
    if style < 0.5:
        return "".join(
            chr(rng.choice((rng.randrange(0x20, 0x7F), rng.randrange(0x110000)))) for _ in range(n)
        )
    text = "".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 40)))
    return text if rng.random() < 0.5 else "{" + text


def mutated(rng: random.Random) -> str:
    """A valid string with a few tokens inserted, deleted or replaced."""
    text = random_sharding(rng)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        op = rng.random()
        if op < 0.4:
            text = text[:i] + rng.choice(_TOKENS) + text[i:]
        elif op < 0.7:
            text = text[:i] + text[i + rng.randint(1, 4) :]
        else:
            text = text[:i] + rng.choice(_TOKENS) + text[i + 1 :]
    return text


SHARDING_FAMILIES: dict[str, Callable[[random.Random], str]] = {
    f.__name__: f
    for f in (
        truncated,
        wrong_list_length,
        duplicate_ids,
        out_of_range_ids,
        bad_transpose,
        product_mismatch,
        last_tile_conflicts,
        unknown_keywords,
        huge_sizes,
        tuples,
        garbage,
        mutated,
    )
}


def clip(text: str, limit: int = 120) -> str:
    """How error messages quote a sharding string (errors.clip)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def mlir_string(text: str) -> str:
    """`text` as the body of an MLIR string literal: `"` and `\\` escaped, control and
    non-UTF-8-encodable characters as `\\XX` byte escapes."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(ch)
        else:
            data = ch.encode("utf-8", "surrogatepass")
            out.append("".join(f"\\{b:02X}" for b in data))
    return "".join(out)


# --- modules ------------------------------------------------------------------------------------


@dataclass
class Case:
    """A malformed input: `data` (text or bytes); its error must contain every `expect` string
    and, for text, name `line` (1-based, of the module or the dump); `may_pass` when some
    draws are valid."""

    name: str
    data: str | bytes
    expect: tuple[str, ...] = ()
    line: int | None = None
    may_pass: bool = False
    is_dump: bool = False


def _tensor(shape) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def module_with(sites: list[tuple[str, str, tuple[int, ...]]], attrs: str = "") -> tuple[str, dict]:
    """A module with one func whose args/results/ops carry the given shardings.

    `sites` holds (kind, sharding, shape) with kind "arg", "result", "op" (an `@Sharding`
    custom call) or "add" (a stablehlo.add with an `mhlo.sharding`). Returns the text and the
    line of each site (by index).
    """
    args = [(k, s, shape) for k, s, shape in sites if k == "arg"]
    results = [(k, s, shape) for k, s, shape in sites if k == "result"]
    ops = [(k, s, shape) for k, s, shape in sites if k in ("op", "add")]
    lines = {}
    head = f"module @fuzz{attrs} {{"
    arg_text = ", ".join(
        f'%arg{i}: {_tensor(shape)} {{mhlo.sharding = "{mlir_string(s)}"}}'
        for i, (_, s, shape) in enumerate(args)
    )
    op_args = [f"%x{i}: {_tensor(shape)}" for i, (_, _, shape) in enumerate(ops)]
    op_args += [f"%r{i}: {_tensor(shape)}" for i, (_, _, shape) in enumerate(results)]
    arg_text = ", ".join(filter(None, [arg_text, *op_args]))
    res_text = ", ".join(
        f'{_tensor(shape)} {{mhlo.sharding = "{mlir_string(s)}"}}' for _, s, shape in results
    )
    body = [head, f"  func.func @main({arg_text}) -> ({res_text}) {{"]
    for index, site in enumerate(sites):
        if site[0] in ("arg", "result"):
            lines[index] = 2
    for i, (kind, s, shape) in enumerate(ops):
        t = _tensor(shape)
        if kind == "op":
            op = f'stablehlo.custom_call @Sharding(%x{i}) {{mhlo.sharding = "{mlir_string(s)}"}}'
            body.append(f"    %y{i} = {op} : ({t}) -> {t}")
        else:
            attr = f'{{mhlo.sharding = "{mlir_string(s)}"}}'
            body.append(f"    %y{i} = stablehlo.add %x{i}, %x{i} {attr} : {t}")
        lines[sites.index((kind, s, shape))] = len(body)
    values = [f"%r{i}" for i, _ in enumerate(results)]
    types = ", ".join(_tensor(shape) for _, _, shape in results)
    body.append(f"    return {', '.join(values)} : {types}" if results else "    return")
    body += ["  }", "}"]
    return "\n".join(body) + "\n", lines


def _valid_tiled(rng: random.Random, max_devices: int = 16) -> tuple[str, int, int]:
    """(sharding, its device count, its data rank) for a random tiled, non-manual sharding."""
    from shardy_convert.sharding import Kind, SubgroupType, parse

    while True:
        text = "{" + " ".join(random_tile_attributes(rng, max_devices)) + "}"
        s = parse(text)
        if s.kind is Kind.TILED and not s.is_replicated and SubgroupType.MANUAL not in s.subgroups:
            return text, s.num_devices, len(s.data_dims)


def _shape(rank: int, rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.choice((8, 16, 24)) for _ in range(rank))


# Each module family: rng -> Case. All of them must fail (unless `may_pass`).


def not_mlir(rng: random.Random) -> Case:
    text = rng.choice(
        (
            "hello world\n",
            "def f(x):\n    return x\n",
            '{"module": [1, 2, 3]}\n',
            "module {\n  func.func @main( {\n",
            "}}}}\n",
            "module @m attributes {mhlo.sharding = } {}\n",
        )
    )
    return Case("not_mlir", text, ("cannot parse the module",))


def truncated_text(rng: random.Random) -> Case:
    path = rng.choice(_MODULES)
    text = path.read_text()
    cut = rng.randrange(1, text.rstrip().rfind("}"))
    return Case("truncated_text", text[:cut], ("cannot parse the module",))


def garbage_bytecode(rng: random.Random) -> Case:
    data = bytearray(_bytecode(rng.choice(_MODULES[:6])))
    style = rng.random()
    if style < 0.25:
        data = data[: rng.randrange(4, len(data))]
    elif style < 0.6:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(4, len(data))] = rng.randrange(256)
    elif style < 0.8:
        k = rng.randrange(4, len(data))
        data[k:k] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    else:
        data = bytearray(b"ML\xefR" + bytes(rng.randrange(256) for _ in range(rng.randint(0, 300))))
    return Case("garbage_bytecode", bytes(data), (), may_pass=True)


def garbage_hlo(rng: random.Random) -> Case:
    """XLA's forms of a real program (make testdata: `--xla_dump_to` HLO text, HloProtos and
    torch_xla's HloModuleProto) mutated: text lines dropped, swapped or edited (a parameter
    number out of range makes XLA's parser fail a CHECK and abort), proto bytes cut or
    flipped. Read in a child process: an error, or a module, never a crash."""
    path = rng.choice(_HLO)
    data = bytearray(path.read_bytes())
    if path.suffix == ".txt":
        lines = data.decode().splitlines(keepends=True)
        k = rng.randrange(1, len(lines))
        style = rng.random()
        if style < 0.3:
            del lines[k]
        elif style < 0.6:
            lines[k] = re.sub(r"parameter\(\d+\)", f"parameter({rng.randint(5, 99)})", lines[k])
            lines[k] = lines[k].replace("sharding={", "sharding={devices=[3,5]0,1 ", 1)
        else:
            j = rng.randrange(1, len(lines))
            lines[j], lines[k] = lines[k], lines[j]
        return Case("garbage_hlo", "".join(lines).encode(), (), may_pass=True)
    if rng.random() < 0.5:
        data = data[: rng.randrange(1, len(data))]
    else:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    return Case("garbage_hlo", bytes(data), (), may_pass=True)


_HLO = [
    *sorted(TESTDATA.glob("*/*.xla_dump/*.before_optimizations.*")),
    TESTDATA / "torch_xla" / "tp_mlp_train.hlo.pb",
]
_BYTECODE: dict = {}


def _bytecode(path) -> bytes:
    if path not in _BYTECODE:
        from shardy_convert.ir.parse import new_context, parse_module, print_module

        with new_context() as ctx:
            _BYTECODE[path] = print_module(parse_module(path.read_text(), ctx), "bytecode")
    return _BYTECODE[path]


_UNKNOWN_OPS = (
    '    "foo.bar"() : () -> ()',
    '    %u = "mystery.op"() : () -> tensor<f32>',
    "    %u = stablehlo.constant {a = #foo.attr<1>} dense<1.0> : tensor<f32>",
    "    %u = stablehlo.constant dense<1.0> : !foo.type",
    "    %u = unknown_op %arg0 : tensor<f32>",
)


def unknown_dialect(rng: random.Random) -> Case:
    lines = rng.choice(_MODULES).read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "func.func" in line) + 1
    lines.insert(k, rng.choice(_UNKNOWN_OPS))
    return Case("unknown_dialect", "\n".join(lines) + "\n", ("cannot parse the module",), k + 1)


def device_counts_disagree(rng: random.Random) -> Case:
    a, n, rank_a = _valid_tiled(rng)
    while True:
        b, m, rank_b = _valid_tiled(rng)
        if m != n:
            break
    kinds = rng.sample(("arg", "result", "op", "add"), 2) if rng.random() < 0.5 else ["arg", "arg"]
    sites = [(kinds[0], a, _shape(rank_a, rng)), (kinds[1], b, _shape(rank_b, rng))]
    text, lines = module_with(sites)
    later = max(range(2), key=lambda i: (lines[i], i)) if lines[0] != lines[1] else 1
    quoted = b if later == 1 else a
    return Case("device_counts_disagree", text, ("devices but", f'"{quoted}"'), lines[later])


def rank_mismatch(rng: random.Random) -> Case:
    s, _, rank = _valid_tiled(rng)
    other = rng.choice([r for r in range(5) if r != rank])
    kind = rng.choice(("arg", "result", "op", "add"))
    text, lines = module_with([(kind, s, _shape(other, rng))])
    return Case("rank_mismatch", text, ("rank",), lines[0])


def tuple_count_mismatch(rng: random.Random) -> Case:
    results = rng.randint(1, 4)
    count = rng.choice([k for k in range(7) if k != results])
    elements = ", ".join(["{replicated}"] * count)
    types = ", ".join(["tensor<8xf32>"] * results)
    text = (
        "module {\n  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        f'    %0:{results} = stablehlo.custom_call @foo(%arg0) {{mhlo.sharding = "{{{elements}}}"}}'
        f" : (tensor<8xf32>) -> ({types})\n"
        "    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    if results == 1:
        text = text.replace("%0:1 =", "%0 =")
    return Case(
        "tuple_count_mismatch",
        text,
        (f"has {count} element{'s' * (count != 1)} but the op has",),
        3,
    )


_REGION = "\n".join(
    (
        "module {{",
        '  func.func @main(%arg0: tensor<8x8xf32> {{mhlo.sharding = "{{devices=[2,2]<=[4]}}"}})'
        " -> {ret_type} {{",
        '    %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {{mhlo.sharding = "{entry}"}}'
        " : (tensor<8x8xf32>) -> tensor<4x4xf32>",
        "    %1 = stablehlo.negate %0 : tensor<4x4xf32>",
        "{middle}",
        "    return {ret} : {ret_type}",
        "  }}",
        "}}",
        "",
    )
)
_EXIT = (
    '    %2 = stablehlo.custom_call @SPMDShardToFullShape(%1) {{mhlo.sharding = "{exit}"}}'
    " : (tensor<4x4xf32>) -> tensor<8x8xf32>"
)


def manual_not_closed(rng: random.Random) -> Case:
    """@SPMDFullToShardShape whose manual values never reach an @SPMDShardToFullShape."""
    middle, ret, ret_type, expect, line = rng.choice(
        (
            ("", "%arg0", "tensor<8x8xf32>", "never closes", 3),
            (
                "    %2 = stablehlo.abs %1 : tensor<4x4xf32>",
                "%arg0",
                "tensor<8x8xf32>",
                "never closes",
                3,
            ),
            ("", "%1", "tensor<4x4xf32>", "escapes", 6),
            (
                _EXIT.replace("SPMDShardToFullShape", "Sharding")
                .replace("-> tensor<8x8xf32>", "-> tensor<4x4xf32>")
                .format(exit="{manual}"),
                "%arg0",
                "tensor<8x8xf32>",
                "never closes",
                3,
            ),
        )
    )
    text = _REGION.format(entry="{manual}", middle=middle, ret=ret, ret_type=ret_type)
    return Case("manual_not_closed", text, (expect,), line)


def manual_escapes(rng: random.Random) -> Case:
    """A manual value returned from the function, directly or through an op."""
    exit_ = _EXIT.format(exit="{devices=[2,2]<=[4]}")
    middle = rng.choice((exit_, exit_ + "\n    %3 = stablehlo.abs %1 : tensor<4x4xf32>"))
    ret = rng.choice(("%1", "%3")) if "%3" in middle else "%1"
    text = _REGION.format(entry="{manual}", middle=middle, ret=ret, ret_type="tensor<4x4xf32>")
    line = text.splitlines().index(f"    return {ret} : tensor<4x4xf32>") + 1
    return Case("manual_escapes", text, ("escapes",), line)


def manual_misused(rng: random.Random) -> Case:
    """Boundary calls with the wrong sharding, arity or partner."""
    exit_ = _EXIT.format(exit="{devices=[2,2]<=[4]}")
    choice = rng.randrange(5)
    if choice == 0:  # the entry's sharding is not manual
        text = _REGION.format(
            entry="{devices=[2,2]<=[4]}", middle=exit_, ret="%2", ret_type="tensor<8x8xf32>"
        )
        return Case("manual_misused", text, ("without a manual sharding",), 3)
    if choice == 1:  # the exit's sharding does not fit the result's rank
        middle = _EXIT.format(exit="{devices=[2,1,2]<=[4]}")
        text = _REGION.format(entry="{manual}", middle=middle, ret="%2", ret_type="tensor<8x8xf32>")
        return Case("manual_misused", text, ("rank",), 5)
    if choice == 2:  # an exit with no entry
        text = _REGION.format(entry="{manual}", middle=exit_, ret="%2", ret_type="tensor<8x8xf32>")
        text = text.replace("@SPMDFullToShardShape", "@Sharding").replace(
            "-> tensor<4x4xf32>\n", "-> tensor<8x8xf32>\n", 1
        )
        text = text.replace(
            "stablehlo.negate %0 : tensor<4x4xf32>",
            "stablehlo.slice %0 [0:4, 0:4] : (tensor<8x8xf32>) -> tensor<4x4xf32>",
        )
        return Case("manual_misused", text, ("SPMDShardToFullShape",), 5)
    if choice == 3:  # an exit without its sharding
        middle = exit_.replace(' {mhlo.sharding = "{devices=[2,2]<=[4]}"}', "")
        text = _REGION.format(entry="{manual}", middle=middle, ret="%2", ret_type="tensor<8x8xf32>")
        return Case("manual_misused", text, ("without an mhlo.sharding",), 5)
    middle = exit_.replace("(%1)", "(%1, %1)").replace(
        "(tensor<4x4xf32>)", "(tensor<4x4xf32>, tensor<4x4xf32>)"
    )
    text = _REGION.format(entry="{manual}", middle=middle, ret="%2", ret_type="tensor<8x8xf32>")
    return Case("manual_misused", text, ("one operand",), 5)


def _one_arg(arg_attrs: str = "", module_attrs: str = "") -> str:
    """A module whose @main takes and returns one tensor<8xf32>; line 1 has the module
    attributes, line 2 the argument's."""
    head = f"module attributes {{{module_attrs}}} {{" if module_attrs else "module {"
    arg = f"%arg0: tensor<8xf32> {{{arg_attrs}}}" if arg_attrs else "%arg0: tensor<8xf32>"
    return (
        f"{head}\n  func.func @main({arg}) -> tensor<8xf32> {{\n"
        "    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )


_TWO = 'mhlo.sharding = "{devices=[2]<=[2]}"'


def bad_attributes(rng: random.Random) -> Case:
    """Sharding and partition attributes of the wrong type or value."""
    choice = rng.randrange(6)
    if choice == 0:
        attr = rng.choice(("3 : i32", '["{replicated}"]', "unit", "{a = 1}"))
        text = _one_arg(f"mhlo.sharding = {attr}")
        return Case("bad_attributes", text, ("must be a string",), 2)
    if choice == 1:
        value = rng.choice(("0 : i32", "-4 : i64", '"8"', "[8]", "8.0 : f32"))
        text = _one_arg(_TWO, f"mhlo.num_partitions = {value}")
        return Case("bad_attributes", text, ("mhlo.num_partitions must be a positive",), 1)
    if choice == 2:
        value = rng.choice(("5 : i32", "[5]", '["{devices=[2]0,0}"]'))
        expect = "must be a string" if "5" in value else '"{devices=[2]0,0}"'
        text = _one_arg("", f"mhlo.spmd_parameters_shardings = {value}")
        return Case("bad_attributes", text, (expect,), 1)
    if choice == 3:
        text = _one_arg(_TWO.replace("2", "8"), "mhlo.num_partitions = 4 : i32")
        return Case("bad_attributes", text, ("mhlo.num_partitions says 4",), 2)
    if choice == 4:
        text = _one_arg('mhlo.sharding = "\\FF\\FE{"')
        return Case("bad_attributes", text, ("not UTF-8",), 2)
    text = _one_arg(_TWO.replace("<=[2]", "<=[3]"), "mhlo.frontend_attributes = 7 : i32")
    return Case("bad_attributes", text, ('"{devices=[2]<=[3]}"',), 2)


def deep_nesting(rng: random.Random) -> Case:
    """Nesting that would overflow MLIR's recursive parser (SIGSEGV at a few thousand)."""
    n = rng.choice((300, 5_000, 100_000))
    text = rng.choice(
        (
            "module attributes {x.a = " + "[" * n + "]" * n + "} {}\n",
            "module {\n" + "module {\n" * n + "}\n" * n + "}\n",
            "module attributes {x.a = " + "tuple<" * n + "i32" + ">" * n + "} {}\n",
            "module attributes {x.a = " + "{b = " * n + "1" + "}" * n + "} {}\n",
            "module {} loc(" + "callsite(" * n + '"a"' + ' at "b")' * n + ")\n",
            '"' + "}" * 1000 + '"\nmodule attributes {x.a = ' + "[" * n + "]" * n + "} {}\n",
        )
    )
    return Case("deep_nesting", text, ("nest more than",))


def declarations(rng: random.Random) -> Case:
    """Function declarations: Shardy's passes segfault on them."""
    sharding = rng.choice(("", ' {mhlo.sharding = "{devices=[2]<=[2]}"}'))
    decl = f"func.func private @ext(%arg0: tensor<8xf32>{sharding}) -> tensor<8xf32>"
    if rng.random() < 0.5:
        decl = "module @inner {\n    " + decl + "\n  }"
    text = (
        f"module {{\n  {decl}\n"
        '  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) '
        "-> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    return Case("declarations", text, ("only declared",), 2 if "inner" not in decl else 3)


def hostile_sharding_in_module(rng: random.Random) -> Case:
    """One malformed sharding string at a random site of a module."""
    family = rng.choice([f for n, f in SHARDING_FAMILIES.items() if n != "huge_sizes"])
    s = family(rng)
    kind = rng.choice(("arg", "result", "op", "add"))
    text, lines = module_with([(kind, s, _shape(rng.randint(0, 3), rng))])
    return Case("hostile_sharding_in_module", text, (), lines[0], may_pass=True)


_MUTATIONS = ("drop_line", "swap_target", "drop_sharding", "retype", "replace_sharding")


def mutated_testdata(rng: random.Random) -> Case:
    """A real module with one structural change; some stay valid."""
    text = rng.choice(_MODULES).read_text()
    for _ in range(rng.randint(1, 3)):
        text = _mutate(rng, text)
    return Case("mutated_testdata", text, (), may_pass=True)


_TARGET = re.compile(r"@(Sharding|SPMDFullToShardShape|SPMDShardToFullShape)\b")
_ATTR = re.compile(r'mhlo\.sharding = "((?:[^"\\]|\\.)*)"')


def _mutate(rng: random.Random, text: str) -> str:
    how = rng.choice(_MUTATIONS)
    if how == "drop_line":
        lines = text.splitlines(keepends=True)
        del lines[rng.randrange(len(lines))]
        return "".join(lines)
    hits = list((_TARGET if how == "swap_target" else _ATTR).finditer(text))
    if not hits:
        return text
    m = rng.choice(hits)
    if how == "swap_target":
        target = rng.choice(("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "Foo"))
        return text[: m.start(1)] + target + text[m.end(1) :]
    if how == "drop_sharding":
        return text[: m.start()] + "mhlo.frontend_attributes = {}" + text[m.end() :]
    if how == "retype":
        return text[: m.start(1)] + mlir_string(random_sharding(rng)) + text[m.end(1) :]
    family = rng.choice(list(SHARDING_FAMILIES.values()))
    return text[: m.start(1)] + mlir_string(family(rng)) + text[m.end(1) :]


MODULE_FAMILIES: dict[str, Callable[[random.Random], Case]] = {
    f.__name__: f
    for f in (
        not_mlir,
        truncated_text,
        garbage_bytecode,
        garbage_hlo,
        unknown_dialect,
        device_counts_disagree,
        rank_mismatch,
        tuple_count_mismatch,
        manual_not_closed,
        manual_escapes,
        manual_misused,
        bad_attributes,
        deep_nesting,
        declarations,
        hostile_sharding_in_module,
        mutated_testdata,
    )
}

# --- torch_xla dumps ----------------------------------------------------------------------------

_MODULES = sorted((TESTDATA / "torch_xla").glob("*.mlir")) + sorted(
    (TESTDATA / "jax").glob("*.gspmd.mlir")
)
_DUMPS = sorted((TESTDATA / "torch_xla").glob("*.dump"))
BEGIN, END = "## BEGIN_GRAPH", "## END_GRAPH"


def dump_truncated(rng: random.Random) -> Case:
    """A real dump cut before its last END marker: mid-graph, mid-header, before any graph."""
    text = rng.choice(_DUMPS).read_text()
    cut = rng.randrange(1, text.rfind(END))
    return Case(
        "dump_truncated", text[:cut], ("graph",) if BEGIN in text[:cut] else (), is_dump=True
    )


def dump_without_graphs(rng: random.Random) -> Case:
    text = rng.choice(_DUMPS).read_text()
    header = text[: text.find(BEGIN)]
    data = rng.choice((header, header + END + "\n", END + "\n", header * 3))
    return Case("dump_without_graphs", data, (BEGIN,), is_dump=True)


def dump_bad_graph(rng: random.Random) -> Case:
    """A real dump with one sharding of one graph replaced by a malformed one."""
    text = rng.choice(_DUMPS).read_text()
    hits = list(_ATTR.finditer(text))
    m = rng.choice(hits)
    bad = rng.choice((duplicate_ids, out_of_range_ids, bad_transpose, product_mismatch))(rng)
    graph = text.count(BEGIN, 0, m.start()) - 1
    line = text.count("\n", 0, m.start()) + 1
    data = text[: m.start(1)] + mlir_string(bad) + text[m.end(1) :]
    return Case("dump_bad_graph", data, (f"graph {graph}", f'"{clip(bad)}"'), line, is_dump=True)


def dump_mutated(rng: random.Random) -> Case:
    text = rng.choice(_DUMPS).read_text()
    begin = text.find(BEGIN)
    mutated = text[:begin] + _mutate(rng, text[begin:])
    return Case("dump_mutated", mutated, (), may_pass=True, is_dump=True)


DUMP_FAMILIES: dict[str, Callable[[random.Random], Case]] = {
    f.__name__: f for f in (dump_truncated, dump_without_graphs, dump_bad_graph, dump_mutated)
}


def case(family: str, seed: int) -> Case:
    rng = random.Random(f"{family}:{seed}")
    make = MODULE_FAMILIES.get(family) or DUMP_FAMILIES[family]
    return make(rng)


__all__ = ["DUMP_FAMILIES", "MODULE_FAMILIES", "SHARDING_FAMILIES", "Case", "case"]

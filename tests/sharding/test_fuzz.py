"""Fuzzing the sharding parser with malformed strings: never anything but a quoted, located
ShardyConvertError, nothing big allocated for absurd sizes, and a sample through `convert`.

Deterministic: hypothesis draws with `derandomize=True` and no example database, so CI sees
the same strings on every run. 12 families x 1,000 strings go through `parse`; 1,000 more sit
in modules that go through `convert`.
"""

from __future__ import annotations

import random
import re
import tracemalloc
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardy_convert import convert
from shardy_convert.errors import ShardingSyntaxError, ShardingValueError, ShardyConvertError
from shardy_convert.sharding import Kind, parse
from tests.fuzz_inputs import SHARDING_FAMILIES, clip, huge_sizes, module_with

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=1000,
    suppress_health_check=list(HealthCheck),
)

# Each example draws one seed; the family builds its string from random.Random(seed), which is
# much cheaper than hypothesis drawing every choice (st.randoms: ~4 ms a string).
SEEDS = st.integers(min_value=0, max_value=2**64)
_COLUMN = re.compile(r"at column (\d+) of ")


def check_parse(text: str) -> object:
    """parse(text) is a sharding that prints and parses back to itself, or a sharding error
    that quotes the text and names a column inside it (or just past its end)."""
    try:
        sharding = parse(text)
    except (ShardingSyntaxError, ShardingValueError) as e:
        message = str(e)
        assert f'"{clip(text)}"' in message, message
        column = _COLUMN.search(message)
        assert column, message
        assert 1 <= int(column.group(1)) <= len(text) + 1, message
        return e
    assert parse(str(sharding)) == sharding, text
    return sharding


@pytest.mark.parametrize("family", sorted(SHARDING_FAMILIES))
@FUZZ
@given(seed=SEEDS)
def test_malformed_strings_raise_quoting_errors(family, seed):
    check_parse(SHARDING_FAMILIES[family](random.Random(seed)))


@pytest.mark.parametrize(
    "family",
    ["wrong_list_length", "duplicate_ids", "bad_transpose", "product_mismatch"],
)
@settings(FUZZ, max_examples=100)
@given(seed=SEEDS)
def test_families_that_are_never_valid_always_raise(family, seed):
    assert isinstance(check_parse(SHARDING_FAMILIES[family](random.Random(seed))), Exception)


# --- absurd sizes: refused before allocating ------------------------------------------------

ABSURD = [
    "{devices=[1000000000]<=[1000000000]}",
    "{devices=[65536,65536]0,1}",
    "{devices=[65536,65536]<=[4294967296]}",
    "{devices=[9223372036854775807]<=[9223372036854775807]}",
    "{devices=[9223372036854775808]<=[2]}",
    "{devices=[4096,8192]<=[8192,4096]T(1,0) last_tile_dims={manual}}",
    # 12.6M devices whose replication groups would have to be sorted one by one: 2.4 GB and
    # 33 s before Tiles.array refused to list more than MAX_MATERIALIZED ids.
    "{devices=[2,6291456]<=[4194304,3]T(1,0) last_tile_dim_replicate}",
    "{devices=[" + ",".join(["1"] * 100_000) + ",2]0,1}",
    "{devices=[2,2]<=[" + ",".join(["1"] * 100_000) + ",4]}",
    "{" * 1_000_000,
    "{maximal device=99999999999999999999999999}",
]


@pytest.mark.parametrize("text", ABSURD, ids=lambda t: clip(t, 40))
def test_absurd_sizes_are_refused_without_allocating(text):
    tracemalloc.start()
    try:
        with pytest.raises(ShardyConvertError):
            parse.__wrapped__(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text) + 2**20, f"{peak} bytes to refuse {clip(text, 60)}"


@settings(FUZZ, max_examples=200)
@given(seed=SEEDS)
def test_huge_sizes_allocate_nothing_big(seed):
    text = huge_sizes(random.Random(seed))
    tracemalloc.start()
    try:
        check_parse(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(text) + 2**21, f"{peak} bytes for {clip(text, 60)}"


# --- regressions found by this fuzzing --------------------------------------------------------


def test_more_than_64_tile_dims_is_a_sharding_error_not_a_numpy_error():
    # numpy arrays have at most 64 dims: to_v2() raised ValueError from inside numpy.
    text = "{devices=[" + "1," * 70 + "2,2]0,1,2,3}"
    with pytest.raises(ShardingValueError, match="more than 64 tile dims at column 11"):
        parse(text)


def test_a_big_iota_that_must_be_listed_is_refused_with_its_column():
    text = "{devices=[2,6291456]<=[4194304,3]T(1,0) last_tile_dim_replicate}"
    with pytest.raises(ShardingValueError, match="more than 1048576 at column 10"):
        parse(text)


def test_big_iotas_that_stay_symbolic_still_parse():
    sharding = parse("{devices=[4096,4096]<=[4096,4096]T(1,0) last_tile_dim_replicate}")
    assert sharding.num_devices == 2**24


# --- through convert: ~1,000 strings embedded in modules ----------------------------------------

_SITE_NAMES = {"arg": "arg 0 of @main", "result": "result 0 of @main", "op": "custom_call"}


def _quotes(message: str, text: str) -> bool:
    """The message quotes the string as written, or (for a valid string the module cannot use)
    as XLA prints it."""
    if f'"{clip(text)}"' in message:
        return True
    try:
        sharding = parse(text)
    except ShardyConvertError:
        return False
    return f'"{sharding}"' in message or f'"{sharding.to_v2()}"' in message


@settings(FUZZ, max_examples=1000)
@given(
    seed=SEEDS,
    family=st.sampled_from(sorted(SHARDING_FAMILIES)),
    kind=st.sampled_from(["arg", "result", "op", "add"]),
    rank=st.integers(0, 3),
)
def test_malformed_shardings_in_modules_fail_at_their_line(seed, family, kind, rank):
    rng = random.Random(seed)
    text = SHARDING_FAMILIES[family](rng)
    try:
        sharding = parse(text)
    except ShardyConvertError:
        sharding = None
    if sharding is not None and sharding.kind is Kind.TILED and rng.random() < 0.7:
        rank = len(sharding.data_dims)  # mostly the right rank: reach the later checks too
    module, lines = module_with([(kind, text, (8,) * rank)])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            convert(module)
    except ShardyConvertError as e:
        message = str(e)
        assert message.startswith(f"{lines[0]}:"), message
        assert _SITE_NAMES.get(kind, "stablehlo.add") in message, message
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # no UTF-8 form: escaped bytes
            assert "is not UTF-8 text" in message, message
        else:
            assert _quotes(message, text), message
        return
    assert sharding is not None, f"{text!r} was accepted in a module but not by parse"

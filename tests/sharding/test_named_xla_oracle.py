"""Named (V3) strings against XLA's own parser, `HloSharding.from_string`, and its
`v3_to_v2_sharding()`: the same canonical text, the same placement, the same reduction.

XLA aborts the process on invalid V3 strings (overlapping or unsorted axes, bad device lists),
so it only sees strings built valid (`named_strategies`) and accepted by our parser first. jaxlib
0.10.2 reads V3 but not reduction kinds (`unreduced=max{...}`) nor `single_device[...]`; 0.12
reads both; 0.7.1 reads no V3 at all. Each is used for what it reads.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.lib import xla_client

from shardy_convert.sharding import parse

from .named_strategies import named_texts

HloSharding = xla_client.HloSharding
READS_V3 = hasattr(HloSharding, "v3_to_v2_sharding")
HAS_REDUCTIONS = hasattr(HloSharding, "reduction_op")

pytestmark = pytest.mark.skipif(
    not READS_V3,
    reason="this jaxlib's XLA reads no named (V3) shardings (jaxlib >= 0.10.2 does; `make "
    "test-newest` runs this on 0.12.0.1)",
)


def _single_device_words() -> tuple[str, ...]:
    if not READS_V3:
        return ("maximal_mesh",)
    try:  # a valid string: an older XLA raises a syntax error, it does not abort
        HloSharding.from_string("{single_device[device_id=0]}")
    except Exception:
        return ("maximal_mesh",)
    return ("maximal_mesh", "single_device")


WORDS = _single_device_words()
# XLA prints the single-device form in its own spelling: the last one it reads.
PRINTED_WORD = WORDS[-1]


def _texts():
    leaf = named_texts(reductions=HAS_REDUCTIONS, single_device_words=WORDS)
    tuples = st.lists(leaf, min_size=1, max_size=3).map(lambda e: "{" + ", ".join(e) + "}")
    return st.one_of(leaf, leaf, tuples)


def _xla_text(text: str) -> str:
    return str(HloSharding.from_string(text))


def _ours(text: str) -> str:
    printed = str(parse(text))
    for word in ("maximal_mesh[", "single_device["):
        printed = printed.replace(word, PRINTED_WORD + "[")
    return printed


@settings(max_examples=400, deadline=None)
@given(_texts())
def test_canonical_text_matches_xla(text):
    ours = _ours(text)  # first: our parser refuses what XLA would abort on
    assert ours == _XLA_QUIRK.sub(r"\1, unreduced\2", _xla_text(text))


# XLA prints a rank-0 sharding with every axis but the size-1 ones unreduced as
# `{mesh['a'=1,'b'=4], unreduced{'b'}}` (its own parser refuses that); we print
# `{mesh['a'=1,'b'=4], unreduced}` (the same placement), which it reads.
_XLA_QUIRK = re.compile(
    r"(mesh\[[^\]]*\](?:, device_ids=\((?:[^()]|\([^()]*\))*\))?), unreduced((?:=\w+)?)\{[^}]*\}"
)


@settings(max_examples=400, deadline=None)
@given(_texts())
def test_placement_matches_xlas_v3_to_v2(text):
    ours = parse(text)
    v2 = HloSharding.from_string(text).v3_to_v2_sharding()
    # XLA's V2 text drops the reduction (its proto keeps it): ours is compared with it added.
    theirs = [dataclasses.replace(leaf, reduction=_reduction(x)) for leaf, x in _leaves(v2)]
    assert [leaf.to_v2() for leaf in ours.leaves()] == theirs, (text, str(v2))
    assert parse(str(ours.to_v2())) == ours


@pytest.mark.skipif(not HAS_REDUCTIONS, reason="this jaxlib's XLA has no reduction kinds")
@settings(max_examples=200, deadline=None)
@given(named_texts(reductions=True, single_device_words=WORDS))
def test_reduction_matches_xla(text):
    ours = parse(text)
    theirs = _reduction(HloSharding.from_string(text))
    if ours.named.all_unreduced or ours.named.keyword == "unreduced":
        assert ours.named.reduction == (theirs or "sum")
    # XLA's V2 text has no reduction; its proto carries it as metadata, as our V2 text does.
    v2 = HloSharding.from_string(str(ours.to_v2()))
    assert _reduction(v2) == ours.reduction


def _reduction(xla_sharding) -> str | None:
    if not HAS_REDUCTIONS:
        return None
    return {0: None, 1: "max", 2: "min"}[xla_sharding.reduction_op()]


def _leaves(xla_sharding):
    """(our parse of each leaf's text, XLA's leaf) of an XLA sharding, tuple or not."""
    leaves = xla_sharding.tuple_elements() or [xla_sharding]
    return [(parse(str(x)), x) for x in leaves]

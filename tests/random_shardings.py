"""Random *valid* sharding strings, for property and differential tests (here and elsewhere).

Every string is one XLA's parser accepts without aborting and `parse` accepts too: device lists
are permutations of the right length, iota sizes agree, never both last-tile forms. They cover
V1 lists (iota-shaped and arbitrary), V2 iotas (canonical or not), subgroups of every type,
size-1 dims, shard groups, metadata, attribute orders, whitespace and comments, and tuples.
"""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import settings

# The property tests' setting: derandomized, so every run (and CI) draws the same examples.
PROPERTY = settings(derandomize=True, max_examples=300, deadline=None)

_SIZES = (1, 2, 2, 2, 3, 4, 4, 5, 6, 8)
_TYPES = ("manual", "replicated", "unreduced")
_METADATA = (
    'metadata={op_name="jit(f)/dot{1}" source_file="a.py" source_line=3}',
    'metadata={{op_name="a"}, {op_type="b\\"c"}}',
    "metadata={}",
)


def factorization(n: int, rng: random.Random, ones: bool = True) -> list[int]:
    """A random ordered factorization of n, e.g. 24 -> [2, 6, 2], maybe with a 1 inserted."""
    dims = []
    while n > 1:
        d = rng.choice([d for d in range(2, n + 1) if n % d == 0])
        dims.append(d)
        n //= d
    if ones and rng.random() < 0.2:
        dims.insert(rng.randrange(len(dims) + 1), 1)
    return dims or [1]


def ordered_factorizations(n: int) -> list[tuple[int, ...]]:
    """Every ordered factorization of n into factors >= 2: 12 -> (2, 2, 3), (2, 3, 2), (2, 6),
    (3, 2, 2), (3, 4), (4, 3), (6, 2), (12,)."""
    if n == 1:
        return [()]
    return [
        (d, *rest) for d in range(2, n + 1) if n % d == 0 for rest in ordered_factorizations(n // d)
    ]


def iota_text(reshape, perm) -> str:
    """`<=[R]T(P)`, with `T(...)` only when there are several reshape dims (XLA's grammar)."""
    text = "<=[" + ",".join(map(str, reshape)) + "]"
    return text + ("T(" + ",".join(map(str, perm)) + ")" if len(reshape) > 1 else "")


def random_tile_attributes(rng: random.Random, max_devices: int = 256) -> list[str]:
    """`devices=[...]...` plus an optional `last_tile_dim_replicate` or `last_tile_dims={...}`."""
    dims, types = _random_dims(rng, max_devices)
    n = math.prod(dims)
    reshape = factorization(n, rng)
    perm = rng.sample(range(len(reshape)), len(reshape))
    style = rng.random()
    if style < 0.4:
        body = iota_text(reshape, perm)
    else:
        ids = np.arange(n).reshape(reshape).transpose(perm).ravel().tolist()
        if style > 0.8:
            rng.shuffle(ids)
        body = ",".join(map(str, ids))
    attributes = ["devices=[" + ",".join(map(str, dims)) + "]" + body]
    if types == ["last_tile_dim_replicate"]:
        attributes += types
    elif types:
        attributes.append("last_tile_dims={" + ", ".join(types) + "}")
    return attributes


def _random_dims(rng: random.Random, max_devices: int) -> tuple[list[int], list[str]]:
    while True:
        dims = [rng.choice(_SIZES) for _ in range(rng.randint(0, 4))]
        types: list[str] = []
        style = rng.random()
        if style < 0.3:
            types = ["last_tile_dim_replicate"]
            dims.append(rng.choice(_SIZES))
        elif style < 0.5:
            pool = (*_TYPES, "maximal") if rng.random() < 0.15 else _TYPES
            types = [rng.choice(pool) for _ in range(rng.randint(1, 3))]
            dims += [rng.choice(_SIZES) for _ in types]
        if dims and 2 <= math.prod(dims) <= max_devices:
            return dims, types


def random_single(rng: random.Random, metadata: bool = True) -> str:
    """One non-tuple sharding string."""
    r = rng.random()
    if r < 0.06:
        attributes = [rng.choice(("replicated", "manual", "unknown", "unreduced"))]
    elif r < 0.1:
        device = rng.randrange(16)
        attributes = ["maximal", rng.choice((f"device={device}", f"devices=[1]{device}"))]
    elif r < 0.12:
        attributes = [f"devices=[{','.join('1' * rng.randint(1, 3))}]<=[1]"]
    else:
        attributes = random_tile_attributes(rng)
    if rng.random() < 0.15:
        attributes.append(f"{rng.choice(('shard_as', 'shard_like'))} {rng.randrange(5)}")
    if metadata and rng.random() < 0.15:
        attributes.append(rng.choice(_METADATA))
    if rng.random() < 0.3:
        rng.shuffle(attributes)
    separator = rng.choice((" ", " ", "  ", " /* c */ ", "\n"))
    return "{" + separator.join(attributes) + "}"


def random_sharding(rng: random.Random, metadata: bool = True) -> str:
    """A sharding string; one in ten is a tuple (possibly empty)."""
    if rng.random() < 0.1:
        elements = [random_single(rng, metadata) for _ in range(rng.randint(0, 7))]
        return "{" + ", ".join(elements) + "}"
    return random_single(rng, metadata)

"""GSPMD's choices at a program's boundary, and where they are kept: the parameter and output
shardings XLA's GSPMD partitioner chooses for a module (`gspmd_boundary`), cached by a hash of
the program, the device count and the options, in memory (per process) and on disk where the
caller names a directory (one JSON file per program; keyed by jaxlib's version too).

torch_xla leaves every output of its graphs unannotated and lets the partitioner choose
(`allow_spmd_sharding_propagation_to_output`); the sharding chosen for an output is the input
sharding of the next step, so a partitioner that chooses otherwise than GSPMD makes torch_xla
trace and compile other programs (issue 17: AdamW's optimizer states). These are GSPMD's
choices, for `match-gspmd-boundary` to pin.

The compile (xla/): the pool's CPU client of N devices (it does not read `XLA_FLAGS`, so it
works in a process whose jax backend or torch_xla runtime already started), the caller's
compile options (the plugin's CompileOptionsProto: torch_xla's propagation flags) with GSPMD,
the identity device assignment, and LLVM at optimization level 0 (`optimize=False`: the same
shardings at about half the CPU time; tests/passes/test_match_gspmd_boundary.py compares). Nothing
is run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ShardyConvertError, clip
from ..lru import LRU
from ..xla import compat
from ..xla.compiler import CompileError, compile_program
from ..xla.options import Flags, compile_options
from .output import write_atomic

_cache: LRU[bytes, Boundary] = LRU(256)  # this process's, by program digest


@dataclass(frozen=True)
class Boundary:
    """GSPMD's shardings of one compiled program: one GSPMD string per parameter and output of
    @main, and what it cost (`seconds` of compile; 0 when it came from a cache)."""

    parameters: tuple[str, ...]
    outputs: tuple[str, ...]
    seconds: float = 0.0
    cached: bool = False


def gspmd_boundary(
    program: bytes | str,
    num_devices: int,
    *,
    compile_options: bytes | None = None,
    propagate_to_parameters: Flags = False,
    propagate_to_output: Flags = True,
    cache_dir: str | os.PathLike | None = None,
) -> Boundary:
    """GSPMD's parameter and output shardings of `program` (StableHLO text or bytecode, already
    validated: XLA aborts on some malformed shardings) on `num_devices` devices. The
    propagation flags apply where `compile_options` (a serialized CompileOptionsProto) is not
    given. Raises ShardyConvertError when XLA does not compile it."""
    data = program.encode() if isinstance(program, str) else program
    flags = (propagate_to_parameters, propagate_to_output)
    key = hashlib.blake2b(digest_size=20)
    for part in (data, str(num_devices).encode(), compile_options or repr(flags).encode()):
        key.update(len(part).to_bytes(8, "little") + part)
    key.update(compat.jaxlib_version().encode())  # another XLA may choose otherwise
    digest = key.digest()
    found = _remembered(digest, cache_dir)
    if found is not None:
        return found
    boundary = _compile(data, num_devices, compile_options, flags)
    _remember(digest, boundary, cache_dir)
    return boundary


def _compile(data: bytes, n: int, proto: bytes | None, flags: tuple) -> Boundary:
    options = compile_options(
        n,
        shardy=False,
        propagate_to_parameters=flags[0],
        propagate_to_output=flags[1],
        proto=proto,
        optimize=False,
    )
    try:
        compiled = compile_program(data, n, options)
    except CompileError as e:  # XLA's reason, first line
        raise ShardyConvertError(
            f"GSPMD does not compile the program: {clip(e.first_line, 300)}"
        ) from None
    strings = [
        tuple(str(s) for s in found or ()) for found in (compiled.parameters, compiled.outputs)
    ]
    parameters, outputs = strings
    return Boundary(parameters, outputs, seconds=compiled.seconds)


def _remembered(digest: bytes, cache_dir) -> Boundary | None:
    found = _cache.get(digest)
    if found is not None:
        return Boundary(found.parameters, found.outputs, cached=True)
    if cache_dir is None:
        return None
    path = Path(cache_dir) / f"{digest.hex()}.json"
    try:
        entry = json.loads(path.read_text())
        boundary = Boundary(tuple(entry["parameters"]), tuple(entry["outputs"]), cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, or not ours: compiled again and rewritten
    if not all(isinstance(s, str) for s in boundary.parameters + boundary.outputs):
        return None
    _remember(digest, boundary, None)
    return boundary


def _remember(digest: bytes, boundary: Boundary, cache_dir) -> None:
    _cache.put(digest, boundary)
    if cache_dir is None:
        return
    folder = Path(cache_dir)
    entry = {"parameters": list(boundary.parameters), "outputs": list(boundary.outputs)}
    with contextlib.suppress(OSError):  # a cache that cannot be written is no cache
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / f"{digest.hex()}.json", json.dumps(entry).encode())

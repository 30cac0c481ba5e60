"""What GSPMD compiles at a program's boundary: the parameter and output shardings XLA's GSPMD
partitioner chooses for a module, read from its compile on jaxlib's CPU client.

torch_xla leaves every output of its graphs unannotated and lets the partitioner choose
(`allow_spmd_sharding_propagation_to_output`); the sharding chosen for an output is the input
sharding of the next step, so a partitioner that chooses otherwise than GSPMD makes torch_xla
trace and compile other programs (issue 17: AdamW's optimizer states). These are GSPMD's
choices, for `match-gspmd-boundary` to pin.

The compile: a CPU client of jaxlib's own for N devices (`xla_client.make_cpu_client(
num_devices=N)`, jaxlib 0.7.1 and 0.10.2 alike: it does not read `XLA_FLAGS`, so it works in a
process whose jax backend or torch_xla runtime already started), the caller's compile options
(the plugin's CompileOptionsProto: torch_xla's propagation flags) with GSPMD, the identity
device assignment, and LLVM at optimization level 0: sharding propagation and the partitioner
run on HLO before LLVM sees it, so the shardings are the same at about half the CPU time
(tests/test_match_gspmd_boundary.py compares). Nothing is run.

Cached by a hash of the program, the device count and the options: in memory (per process),
and on disk where the caller names a directory (`cache_dir`; keyed by jaxlib's version too).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ..errors import ShardyConvertError, clip

_CACHE_SIZE = 256
_lock = threading.Lock()
_clients: dict[int, object] = {}
_cache: OrderedDict[bytes, Boundary] = OrderedDict()


@dataclass(frozen=True)
class Boundary:
    """GSPMD's shardings of one compiled program: one GSPMD string per parameter and output of
    @main, and what it cost (`seconds` of compile; 0 when it came from a cache)."""

    parameters: tuple[str, ...]
    outputs: tuple[str, ...]
    seconds: float = 0.0
    cached: bool = False


def user_cache_dir() -> Path:
    """Where an on-disk cache goes when the caller asks for one without naming it."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "shardy-convert" / "gspmd-boundary"


def cache_dir(value: str | os.PathLike | bool | None) -> str | None:
    """The directory an on-disk cache option names: None or False none, True the user's
    cache dir, else the path given."""
    if value is None or value is False:
        return None
    return str(user_cache_dir()) if value is True else os.fspath(value)


def gspmd_boundary(
    program: bytes | str,
    num_devices: int,
    *,
    compile_options: bytes | None = None,
    propagate_to_parameters: bool | tuple[bool, ...] = False,
    propagate_to_output: bool | tuple[bool, ...] = True,
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
    key.update(_jaxlib_version())  # another XLA may choose otherwise
    digest = key.digest()
    found = _remembered(digest, cache_dir)
    if found is not None:
        return found
    start = time.perf_counter()
    parameters, outputs = _compile(data, num_devices, compile_options, flags)
    boundary = Boundary(parameters, outputs, seconds=time.perf_counter() - start)
    _remember(digest, boundary, cache_dir)
    return boundary


def _jaxlib_version() -> bytes:
    import jaxlib

    return jaxlib.__version__.encode()


def _remembered(digest: bytes, cache_dir) -> Boundary | None:
    with _lock:
        found = _cache.get(digest)
        if found is not None:
            _cache.move_to_end(digest)
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
    with _lock:
        _cache[digest] = boundary
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    if cache_dir is None:
        return
    folder = Path(cache_dir)
    entry = {"parameters": list(boundary.parameters), "outputs": list(boundary.outputs)}
    with contextlib.suppress(OSError):  # a cache that cannot be written is no cache
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{digest.hex()}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(entry))
        os.replace(tmp, folder / f"{digest.hex()}.json")


def _client(n: int):
    """One CPU client of `n` devices per process (its own, beside jax's or torch_xla's)."""
    from jaxlib import xla_client as xc

    from ..ir.mlir import cpp_stderr

    with _lock:
        if n not in _clients:
            if not _clients:  # freed while the interpreter is whole, as jax frees its own
                atexit.register(_free_clients)
            with cpp_stderr():  # the client lists its devices on fd 2
                _clients[n] = xc.make_cpu_client(num_devices=n)
        return _clients[n]


def _free_clients() -> None:
    with _lock:
        _clients.clear()


def _options(n: int, proto: bytes | None, flags: tuple):
    import numpy as np
    from jaxlib import xla_client as xc

    options = xc.CompileOptions.ParseFromString(proto) if proto else xc.CompileOptions()
    build = options.executable_build_options
    if not proto:
        to_parameters, to_output = ([f] if isinstance(f, bool) else list(f) for f in flags)
        build.allow_spmd_sharding_propagation_to_parameters = to_parameters
        build.allow_spmd_sharding_propagation_to_output = to_output
    build.num_partitions = n
    build.num_replicas = 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = False
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    build.debug_options.xla_backend_optimization_level = 0
    build.debug_options.xla_llvm_disable_expensive_passes = True
    return options


def _compile(data: bytes, n: int, proto: bytes | None, flags: tuple):
    from jaxlib import xla_client as xc

    from ..ir.mlir import cpp_stderr

    client = _client(n)
    devices = xc.DeviceList(tuple(client.devices()[:n]))
    options = _options(n, proto, flags)
    try:
        # XLA's log (the device list, GSPMD's deprecation notice) stays off the host's stderr.
        with cpp_stderr():
            executable = client.compile_and_load(data, devices, options)
    except Exception as e:  # XlaRuntimeError: XLA's reason, first line
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ShardyConvertError(f"GSPMD does not compile the program: {clip(reason, 300)}")
    try:
        return _strings(executable.get_parameter_shardings()), _strings(
            executable.get_output_shardings()
        )
    finally:
        del executable


def _strings(protos) -> tuple[str, ...]:
    """GSPMD strings of XLA's shardings; a one-device program has none (all replicated)."""
    from jaxlib import xla_client as xc

    if protos is None:
        return ()
    return tuple(str(xc.HloSharding.from_proto(p)) for p in protos)

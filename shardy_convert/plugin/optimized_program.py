"""Relabel the partition ids in a compiled program's parameter and output shardings.

When the plugin wrapper compiles an iota-mesh program in a custom device order (see
passes/iota_mesh.py), partition k of the executable runs what the caller calls partition
`order[k]`. PJRT clients read an executable's parameter and output shardings from its optimized
program (`PJRT_Executable_OptimizedProgram`: an `HloModuleProtoWithConfig`, or a bare
`HloModuleProto`); the wrapper hands them this program with every device id k of those
shardings replaced by order[k], which is how the caller's own (GSPMD) program named them.

Worked example, order [5, 2, 7, 0, 3, 6, 1, 4] on a (2, 4) mesh: the compiled output sharding
`{devices=[2,4]<=[8]}` (partition k holds tile k) becomes `{devices=[2,4]5,2,7,0,3,6,1,4}`,
the V1 list torch_xla wrote for `Mesh(order, (2, 4))` itself.

Fields (xla/service/hlo.proto, xla/xla_data.proto): HloModuleProtoWithConfig.hlo_module = 1;
HloModuleProto.spmd_output_sharding = 12, spmd_parameters_shardings = 14; OpSharding.type = 1
(MAXIMAL 1, TUPLE 2, OTHER 3), tile_assignment_dimensions = 3, tile_assignment_devices = 4,
tuple_shardings = 5, iota_reshape_dims = 9, iota_transpose_perm = 10.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ShardyConvertError
from ..formats.protowire import (
    FIXED32,
    FIXED64,
    LENGTH,
    VARINT,
    WireError,
    encode_varint,
    field,
    fields,
    ints,
    varint,
)

_WITH_CONFIG_MODULE = 1
_OUTPUT_SHARDING, _PARAMETER_SHARDINGS = 12, 14
_TYPE, _DIMS, _DEVICES, _TUPLE, _IOTA_DIMS, _IOTA_PERM = 1, 3, 4, 5, 9, 10
_MAXIMAL, _TUPLE_TYPE, _OTHER = 1, 2, 3


def relabel_program(data: bytes, form: str, order: list[int]) -> bytes:
    """The optimized program `data` ("hlo_with_config" or "hlo") with its parameter and output
    shardings' device ids k replaced by order[k]."""
    try:
        return _relabel_program(data, form, order)
    except WireError as e:
        raise ShardyConvertError(f"the optimized program is not a valid protobuf: {e}") from None


def _relabel_program(data: bytes, form: str, order: list[int]) -> bytes:
    done: dict[bytes, bytes] = {}  # a program repeats a few shardings on hundreds of values
    if form == "hlo":
        return _relabel_module(data, order, done)
    if form != "hlo_with_config":
        raise ShardyConvertError(f"cannot relabel an optimized program of format {form!r}")
    out = bytearray()
    for number, _, value, raw in fields(data):
        out += field(number, _relabel_module(value, order, done)) if number == 1 else raw
    return bytes(out)


def _relabel_module(data: bytes, order: list[int], done: dict[bytes, bytes]) -> bytes:
    """The module with its sharding fields relabelled: the bytes between them are copied as
    they are (a whole-model program's computations are most of its megabytes), each distinct
    sharding is relabelled once."""
    out, copied = bytearray(), 0
    view = memoryview(data)
    for number, start, value in _sharding_fields(data):
        if value not in done:
            done[value] = relabel_sharding(value, order)
        if done[value] is value:
            continue
        out += view[copied:start]
        out += field(number, done[value])
        copied = start + len(field(number, value))
    if not copied:
        return data
    out += view[copied:]
    return bytes(out)


def _sharding_fields(data: bytes):
    """(number, start, value) of each parameter or output sharding field of a module, read
    without copying the fields between them."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            _, pos = varint(data, pos)
        elif wire in (FIXED64, FIXED32):
            pos += 8 if wire == FIXED64 else 4
        elif wire == LENGTH:
            length, pos = varint(data, pos)
            if number in (_OUTPUT_SHARDING, _PARAMETER_SHARDINGS):
                yield number, start, data[pos : pos + length]
            pos += length
        else:
            raise WireError(f"wire type {wire} at byte {start}")
        if number == 0 or pos > len(data):
            raise WireError(f"the field at byte {start} is malformed or runs past the end")


def relabel_sharding(data: bytes, order: list[int]) -> bytes:
    """One serialized OpSharding with device ids k -> order[k] (iota forms made explicit);
    `data` itself where nothing changes (an explicit list in the identity order)."""
    return _relabelled(data, tuple(order))


@functools.lru_cache(maxsize=1024)  # the elements of a tuple sharding repeat, program to program
def _relabelled(data: bytes, order: tuple[int, ...]) -> bytes:
    entries = fields(data)
    kinds = ints(entries, _TYPE)
    kind = kinds[-1] if kinds else 0
    if kind == _TUPLE_TYPE:
        return b"".join(
            field(n, _relabelled(v, order)) if n == _TUPLE else raw for n, _, v, raw in entries
        )
    if kind not in (_MAXIMAL, _OTHER):
        return data
    identity = all(k == d for k, d in enumerate(order))
    if identity and not any(n in (_IOTA_DIMS, _IOTA_PERM) for n, *_ in entries):
        return data  # already an explicit list of the caller's ids
    devices = _devices(entries)
    if devices.size and (devices.min() < 0 or devices.max() >= len(order)):
        raise ShardyConvertError(f"a compiled sharding names device {devices.max()}")
    relabelled = np.asarray(order, dtype=np.int64)[devices]
    kept = b"".join(raw for n, _, _, raw in entries if n not in (_DEVICES, _IOTA_DIMS, _IOTA_PERM))
    ids = relabelled.ravel()
    if ids.size and ids.max() < 128:  # a varint of one byte each
        packed = ids.astype(np.uint8).tobytes()
    else:
        packed = b"".join(encode_varint(int(d)) for d in ids)
    return kept + field(_DEVICES, packed)


def _devices(entries) -> np.ndarray:
    explicit = ints(entries, _DEVICES)
    if explicit:
        return np.asarray(explicit, dtype=np.int64)
    reshape, perm = ints(entries, _IOTA_DIMS), ints(entries, _IOTA_PERM)
    total = int(np.prod(ints(entries, _DIMS) or [1]))
    if not reshape:
        return np.arange(total, dtype=np.int64)
    return np.arange(int(np.prod(reshape))).reshape(reshape).transpose(perm).ravel()

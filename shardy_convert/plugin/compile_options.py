"""The serialized `xla.CompileOptionsProto` a PJRT plugin receives with every program: read the
facts the conversion needs, and rewrite it to compile with the Shardy partitioner.

No protobuf package: the wire format is `formats/protowire.py`. The fields used (xla/pjrt/proto/
compile_options.proto, xla/xla.proto, xla/xla_data.proto):

    CompileOptionsProto            executable_build_options = 3
    ExecutableBuildOptionsProto    num_replicas = 4, num_partitions = 5,
                                   use_spmd_partitioning = 6, device_assignment = 9,
                                   allow_spmd_sharding_propagation_to_output = 12 (repeated bool),
                                   allow_spmd_sharding_propagation_to_parameters = 18 (same),
                                   use_shardy_partitioner = 19
    DeviceAssignmentProto          replica_count = 1, computation_count = 2,
                                   computation_devices = 3 { replica_device_ids = 1 (repeated) }

Rewriting keeps every byte it does not mean to change: protobuf merges repeated occurrences of
a sub-message, so `use_shardy_partitioner` is set by appending a second
`executable_build_options` holding only field 19 (5 bytes: torch_xla 2.9's 75-byte options
come back as 80 bytes, the first 75 untouched). A device assignment cannot be merged that way
(its devices are a repeated field, which would append), so it is replaced inside the existing
sub-message.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import ShardyConvertError, plural
from ..formats import protowire

_BUILD_OPTIONS = 3
_NUM_REPLICAS, _NUM_PARTITIONS, _USE_SPMD, _DEVICE_ASSIGNMENT = 4, 5, 6, 9
_PROPAGATE_TO_OUTPUT, _PROPAGATE_TO_PARAMETERS, _USE_SHARDY = 12, 18, 19


@dataclass(frozen=True)
class CompileOptions:
    """What a compile was asked for (proto defaults where a field is absent)."""

    num_replicas: int = 1
    num_partitions: int = 1
    use_spmd_partitioning: bool = False
    use_shardy_partitioner: bool = False
    #: The device of each partition (one replica), or None if the options name no assignment.
    device_assignment: tuple[int, ...] | None = None
    propagate_to_parameters: tuple[bool, ...] = (False,)
    propagate_to_output: tuple[bool, ...] = (False,)


def _fields(data: bytes) -> list[protowire.Field]:
    """The message's fields (protowire.fields); ShardyConvertError if they are no proto."""
    try:
        return protowire.fields(data)
    except protowire.WireError as e:
        raise ShardyConvertError(f"the compile options are not a valid protobuf: {e}") from None


def _ints(entries: list[protowire.Field], number: int) -> list[int]:
    try:
        return protowire.ints(entries, number)
    except protowire.WireError as e:
        raise ShardyConvertError(f"the compile options are not a valid protobuf: {e}") from None


# --------------------------------------------------------------------------------------------
# Reading and rewriting


def _build_entries(data: bytes) -> list[protowire.Field]:
    """The fields of every `executable_build_options`, merged in order (protobuf's rule)."""
    merged = []
    for number, wire, value, _ in _fields(data):
        if number == _BUILD_OPTIONS and wire == protowire.LENGTH:
            merged.extend(_fields(value))
    return merged


def _last(entries, number: int, default: int) -> int:
    values = _ints(entries, number)
    return values[-1] if values else default


@functools.lru_cache(maxsize=64)  # a process compiles with a few distinct options
def decode(data: bytes) -> CompileOptions:
    """The facts of serialized compile options; ShardyConvertError if they are not a proto."""
    build = _build_entries(data)
    assignment = None
    blobs = [v for n, w, v, _ in build if n == _DEVICE_ASSIGNMENT and w == protowire.LENGTH]
    if blobs:
        assignment = device_assignment(b"".join(blobs))
    return CompileOptions(
        num_replicas=_last(build, _NUM_REPLICAS, 1),
        num_partitions=_last(build, _NUM_PARTITIONS, 1),
        use_spmd_partitioning=bool(_last(build, _USE_SPMD, 0)),
        use_shardy_partitioner=bool(_last(build, _USE_SHARDY, 0)),
        device_assignment=assignment,
        propagate_to_parameters=tuple(map(bool, _ints(build, _PROPAGATE_TO_PARAMETERS)))
        or (False,),
        propagate_to_output=tuple(map(bool, _ints(build, _PROPAGATE_TO_OUTPUT))) or (False,),
    )


def device_assignment(data: bytes) -> tuple[int, ...]:
    """The device of each computation (partition) of a `DeviceAssignmentProto` with one
    replica; ShardyConvertError for more replicas."""
    devices = []
    for number, wire, value, _ in _fields(data):
        if number != 3 or wire != protowire.LENGTH:
            continue
        ids = _ints(_fields(value), 1)
        if len(ids) != 1:
            raise ShardyConvertError(
                f"a device assignment with {plural(len(ids), 'replica')} per partition; only 1 is "
                "supported"
            )
        devices.append(ids[0])
    return tuple(devices)


def encode_device_assignment(devices: tuple[int, ...] | list[int]) -> bytes:
    """A `DeviceAssignmentProto` for one replica and one partition per entry of `devices`."""
    out = protowire.field(1, 1) + protowire.field(2, len(devices))
    for device in devices:
        out += protowire.field(3, protowire.field(1, int(device)))
    return out


def caller_assignment(data: bytes, order: list[int] | tuple[int, ...]) -> bytes:
    """The `DeviceAssignmentProto` of an executable compiled in another device order, seen by
    its caller: the plugin's computation k (on device d) is the caller's computation
    order[k]. Plugin [5, 2, 7, 0, 3, 6, 1, 4] with order [5, 2, 7, 0, 3, 6, 1, 4] (the
    caller's identity assignment) reads [0, 1, 2, 3, 4, 5, 6, 7]."""
    devices = device_assignment(data)
    if sorted(order) != list(range(len(devices))):
        raise ShardyConvertError(
            f"a device order {list(order)} for an assignment of {plural(len(devices), 'partition')}"
        )
    caller = [0] * len(devices)
    for k, partition in enumerate(order):
        caller[partition] = devices[k]
    return encode_device_assignment(caller)


def rewrite(data: bytes, *, devices: tuple[int, ...] | list[int] | None = None) -> bytes:
    """`data` set to compile with the Shardy partitioner and, if `devices` is given, with that
    device of each partition; every other byte is kept."""
    if devices is None:
        _fields(data)  # the bytes must be a proto
        return data + protowire.field(_BUILD_OPTIONS, protowire.field(_USE_SHARDY, 1))
    out = bytearray()
    for number, wire, value, raw in _fields(data):
        if number != _BUILD_OPTIONS or wire != protowire.LENGTH:
            out += raw
            continue
        kept = b"".join(r for n, _, _, r in _fields(value) if n != _DEVICE_ASSIGNMENT)
        out += protowire.field(_BUILD_OPTIONS, kept)
    extra = protowire.field(
        _DEVICE_ASSIGNMENT, encode_device_assignment(devices)
    ) + protowire.field(_USE_SHARDY, 1)
    return bytes(out) + protowire.field(_BUILD_OPTIONS, extra)

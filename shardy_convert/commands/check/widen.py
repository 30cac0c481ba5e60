"""The same program with its floating types widened to f64, for the rerun that tells float
noise from a real difference.

Two programs that sum the same partial results in another order differ by about eps of their
float type; in f64 that difference shrinks by nine orders of magnitude (eps 2.2e-16 against
1.2e-7), while a moved shard or a wrong all-reduce group stays as large as the values. So when
GSPMD, Shardy and the unpartitioned run disagree in the program's own types, the three are run
again with every f32, bf16 and f16 (and complex<f32>) written f64 (complex<f64>): the module
text is rewritten type by type, outside string literals, and the float constants written in
hex are re-encoded (`dense<0xFF800000> : tensor<f32>`, -inf, becomes
`dense<0xFFF0000000000000> : tensor<f64>`). Decimal constants read the same in either type.

Not every program allows it: a bitcast reads a float's bits, a custom call other than the
sharding markers may be a kernel for one type (LAPACK's `sgetrf` is f32's), a
`dense_resource` blob cannot be re-encoded here. `widened` then says why, and the caller
draws a second time instead.
"""

from __future__ import annotations

import re

import numpy as np

WIDENED = ("f32", "bf16", "f16")
# Custom calls that only carry or move a value (and XLA's own round-trip markers): any type.
_TYPE_FREE_CALLS = re.compile(
    r"@(Sharding|SPMDFullToShardShape|SPMDShardToFullShape|xla\.sdy\.\w+|mhlo\.\w+)\b"
)
_CUSTOM_CALL = re.compile(r"custom_call\s+@([\w.$-]+)|call_target_name\s*=\s*\"([^\"]*)\"")
_STRING = r'"(?:[^"\\]|\\.)*"'
# A float type as a tensor's (or complex's) element type: after `<` or a shape's `x`. A bare
# `f32` is an attribute's type (`epsilon = 1.0e-05 : f32` of batch_norm_training), which
# stays f32.
_TYPE = r"(?<=[<x])(?:f32|bf16|f16)\b"
# A constant written in hex, with its type: quoted raw bytes or an unquoted splat bit pattern.
_HEX_DENSE = (
    r'dense<(?P<hex>"0x[0-9A-Fa-f]*"|0x[0-9A-Fa-f]+)>(?P<colon>\s*:\s*)'
    r"(?P<type>tensor<(?:[^<>]|<[^<>]*>)*>)"
)
_TOKENS = re.compile(f"(?P<string>{_STRING})|(?P<dense>{_HEX_DENSE})|(?P<type_name>{_TYPE})")
_XLA_SHAPE = re.compile(r"\b(?:f32|bf16|f16)(?=\[)")


def widened(text: str) -> tuple[str | None, str]:
    """(the module with f32, bf16 and f16 written f64, "") or (None, why it cannot be)."""
    why = _refusal(text)
    if why:
        return None, why
    if not re.search(_TYPE, text):
        return None, "it has no f32, bf16 or f16 values"
    return _TOKENS.sub(_replace, text), ""


def _refusal(text: str) -> str:
    if "bitcast_convert" in text:
        return "a bitcast_convert reads the bits of its float type"
    if "dense_resource<" in text:
        return "a dense_resource constant"
    for found in _CUSTOM_CALL.finditer(text):
        name = found.group(1) or found.group(2)
        if not _TYPE_FREE_CALLS.fullmatch(f"@{name}"):
            return f"a custom call @{name} may be a kernel for its types"
    return ""


def _replace(found: re.Match) -> str:
    if found.group("type_name"):
        return "f64"
    if found.group("string"):
        return _string(found)
    return _dense(found)


def _string(found: re.Match) -> str:
    """String literals stay as written, but torch_xla's `xla_shape = "f32[256,64]{0,1}"`,
    which XLA reads for the value's layout, follows its value's type."""
    text = found.group("string")
    before = found.string[max(0, found.start() - 12) : found.start()]
    return _XLA_SHAPE.sub("f64", text) if before.rstrip().endswith("xla_shape =") else text


def _dense(found: re.Match) -> str:
    hex_text, colon, tensor = found.group("hex"), found.group("colon"), found.group("type")
    element = _element(tensor)
    wide_type = re.sub(_TYPE, "f64", tensor)
    if element is None:  # an integer or f64 constant: as it is
        return f"dense<{hex_text}>{colon}{wide_type}"
    values = _decode(hex_text, element).astype(_wide(element))
    if hex_text.startswith('"'):  # raw little-endian bytes
        encoded = '"0x' + values.tobytes().hex().upper() + '"'
    else:  # a real splat's bit pattern, as one integer
        encoded = f"0x{int(values.view(np.uint64)[0]):016X}"
    return f"dense<{encoded}>{colon}{wide_type}"


def _element(tensor: str) -> str | None:
    """The widened element type of `tensor<...>` ("f32", "bf16", "f16" or "complex" for
    complex<f32>), None for any other."""
    if "complex<f32>" in tensor:
        return "complex"
    found = re.search(r"(?:<|x)(f32|bf16|f16)>$", tensor)
    return found.group(1) if found else None


def _numpy(element: str) -> np.dtype:
    import ml_dtypes

    names = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
    return np.dtype(np.complex64 if element == "complex" else names[element])


def _wide(element: str) -> np.dtype:
    return np.dtype(np.complex128 if element == "complex" else np.float64)


def _decode(hex_text: str, element: str) -> np.ndarray:
    dtype = _numpy(element)
    if hex_text.startswith('"'):
        return np.frombuffer(bytes.fromhex(hex_text[3:-1]), dtype=dtype)
    # An unquoted splat: a real element's bit pattern as one integer (f32: 8 hex digits).
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    return np.array([int(hex_text, 16)], dtype=width).view(dtype)

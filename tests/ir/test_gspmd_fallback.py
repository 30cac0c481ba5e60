"""XLA's GSPMD-fallback predicate (`hasGspmdAttrsOrOps`), site by site, against XLA itself: the
same modules compiled with Shardy asked for make jaxlib's client log its fallback line exactly
where `fallback_sites` finds one; and the conversion's post-condition."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shardy_convert import convert
from shardy_convert.errors import InternalError
from shardy_convert.ir.gspmd_fallback import FALLBACK_LOG_LINE, fallback_sites
from shardy_convert.ir.parse import new_context, parse_module

from ..conftest import TESTDATA

MESH = 'sdy.mesh @mesh = <["a"=1]>\n'
R = "#sdy.sharding<@mesh, [{}]>"
BODY = "  return %arg0 : tensor<4xf32>\n}\n"


def _main(arg: str = "", result: str = "", body: str = BODY, module_attrs: str = "") -> str:
    text = f"module attributes {{{module_attrs}}} {{\n{MESH}" if module_attrs else MESH
    text += f"func.func @main(%arg0: tensor<4xf32> {{{arg}}}) -> (tensor<4xf32> {{{result}}}) {{\n"
    text += body
    return text + ("}\n" if module_attrs else "")


_CALLEE = (
    "func.func private @f(%arg0: tensor<4xf32> {ATTRS}) -> tensor<4xf32> {\n"
    "  return %arg0 : tensor<4xf32>\n}\n"
)
_CALL = (
    "  %0 = func.call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n"
)
_SHARDING_CALL = (
    "  %0 = stablehlo.custom_call @Sharding(%arg0) {ATTRS} : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n"
)
_RESULT_CALL = (
    "  %0 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%arg0) {has_side_effect = true} : "
    "(tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
)
GSPMD = 'mhlo.sharding = "{replicated}"'

# name -> (module, the kinds of its fallback sites)
CASES = {
    "shardy_module": (_main(f"sdy.sharding = {R}", f"sdy.sharding = {R}"), []),
    "main_argument_is_exempt": (_main(GSPMD, f"sdy.sharding = {R}"), []),
    "main_result": (_main(f"sdy.sharding = {R}", GSPMD), ["result"]),
    "main_result_with_a_shardy_sharding_too": (_main("", f"{GSPMD}, sdy.sharding = {R}"), []),
    "main_result_through_func_result_sharding": (_main("", GSPMD, _RESULT_CALL), []),
    "results_exempt_by_tuple_results_shardings": (
        _main(
            "",
            GSPMD,
            module_attrs='mhlo.frontend_attributes = {xla.sdy.tuple_results_shardings = "x"}',
        ),
        [],
    ),
    "callee_argument": (_main(body=_CALL) + _CALLEE.replace("ATTRS", GSPMD), ["arg"]),
    "callee_argument_with_round_trip_sharding": (
        _main(body=_CALL)
        + _CALLEE.replace(
            "ATTRS",
            f'{GSPMD}, mhlo.frontend_attributes = {{xla.sdy.sharding = "#sdy.sharding<@mesh, '
            '[{}]>"}',
        ),
        [],
    ),
    "sharding_custom_call": (_main(body=_SHARDING_CALL.replace("ATTRS", GSPMD)), ["op"]),
    "sharding_custom_call_with_shardy_sharding": (
        _main(
            body=_SHARDING_CALL.replace(
                "ATTRS", f"{GSPMD}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}]>]>"
            )
        ),
        [],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_fallback_sites(name):
    text, kinds = CASES[name]
    with new_context() as ctx:
        module = parse_module(text, ctx).operation
        sites = fallback_sites(module)
        assert [s.kind for s in sites] == kinds
        assert bool(fallback_sites(module)) is bool(kinds)
        assert [s for s in fallback_sites(module, ops=False) if s.kind == "op"] == []


def test_a_site_says_where_and_what():
    text, _ = CASES["sharding_custom_call"]
    with new_context() as ctx:
        (site,) = fallback_sites(parse_module(text, ctx).operation)
    assert str(site) == (
        '3:8: stablehlo.custom_call @Sharding: mhlo.sharding "{replicated}" without a Shardy '
        "sharding"
    )


_XLA_SAYS = """
import json, sys
from shardy_convert.cpp_stderr import cpp_stderr
from shardy_convert.xla import clients, compat, options

said = {}
client, devices = clients.cpu_client(1), clients.cpu_devices(1)
for name, text in json.loads(sys.stdin.read()).items():
    with cpp_stderr() as log:
        try:
            client.compile_and_load(
                text, compat.device_list(devices), options.compile_options(1, shardy=True)
            )
        except Exception:  # a module XLA refuses later still went through the check
            pass
    said[name] = "".join(log)
print(json.dumps(said))
"""


def test_xla_falls_back_where_the_predicate_says():
    """Differential: XLA's WARNING line (logging on, a fresh process) on exactly the modules
    the predicate flags."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    out = subprocess.run(
        [sys.executable, "-c", _XLA_SAYS],
        input=json.dumps({name: text for name, (text, _) in CASES.items()}),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    logs = json.loads(out.stdout)
    said = {name: FALLBACK_LOG_LINE in log for name, log in logs.items()}
    assert said == {name: bool(kinds) for name, (_, kinds) in CASES.items()}, logs


def test_the_conversion_leaves_nothing_that_falls_back():
    """Post-condition: every converted test-data module is free of fallback sites."""
    for path in sorted((TESTDATA / "jax").glob("*.gspmd.mlir")):
        with new_context() as ctx:
            converted = convert(path.read_text(), num_devices=None)
            assert fallback_sites(parse_module(converted, ctx).operation) == [], path


def test_a_fallback_site_left_by_the_pipeline_is_an_internal_error(monkeypatch):
    """A pass that failed to replace what makes XLA fall back: an internal error naming the
    site and the pass that owns it, never an output XLA would compile with GSPMD."""
    from shardy_convert.ir import gspmd_fallback
    from shardy_convert.passes import pipeline

    text = _main(body=_CALL).replace(MESH, "") + _CALLEE.replace("ATTRS", GSPMD)
    monkeypatch.setattr(pipeline, "conversion", lambda *a, **k: ())  # nothing imports the shardings
    monkeypatch.setattr(gspmd_fallback, "sites", lambda module, ops=True: iter(()))
    with pytest.raises(InternalError) as raised:
        convert(text, num_devices=1)
    message = str(raised.value)
    assert "the conversion left what makes XLA fall back to GSPMD" in message
    assert 'arg 0 of @f: mhlo.sharding "{replicated}"' in message
    assert "import-shardings should have replaced it" in message


@pytest.mark.parametrize("emit", ["text", "bytecode", "portable"])
@pytest.mark.parametrize("validate", [False, True])
def test_a_sharding_call_left_by_the_pipeline_is_an_internal_error_in_every_form(
    monkeypatch, emit, validate
):
    """convert() checks the `@Sharding` calls on the module as written when nothing runs
    Shardy's import on it (the written form says whether there is any to look for), before
    the import otherwise: a call left is an internal error either way, nothing returned."""
    from shardy_convert.ir import gspmd_fallback
    from shardy_convert.passes import pipeline

    text = _main(body=_SHARDING_CALL.replace("ATTRS", GSPMD)).replace(MESH, "")
    monkeypatch.setattr(pipeline, "conversion", lambda *a, **k: ())  # nothing is imported
    monkeypatch.setattr(gspmd_fallback, "sites", lambda module, ops=True: iter(()))
    with pytest.raises(InternalError) as raised:
        convert(text, num_devices=1, emit=emit, validate=validate)
    message = str(raised.value)
    assert "stablehlo.custom_call @Sharding" in message
    assert "import-custom-calls should have replaced it" in message


def test_a_module_written_without_a_sharding_call_is_not_walked(monkeypatch):
    """The written form holds no `Sharding`: the ops are not walked for `@Sharding` calls."""
    from shardy_convert.ir import gspmd_fallback

    walked = []
    real = gspmd_fallback._sharding_calls
    monkeypatch.setattr(gspmd_fallback, "_sharding_calls", lambda f: walked.append(f) or real(f))
    gspmd = _main(GSPMD, GSPMD).replace(MESH, "")
    convert(gspmd, num_devices=1, validate=False)
    assert walked == []
    convert(
        gspmd.replace(BODY, _SHARDING_CALL.replace("ATTRS", GSPMD)), num_devices=1, validate=False
    )
    assert len(walked) == 0  # converted to sdy.sharding_constraint: nothing named Sharding
    convert(gspmd, num_devices=1, validate=True)  # Shardy's import runs: checked before it
    assert len(walked) == 1

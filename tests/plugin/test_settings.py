"""The plugin's one `Settings`: checked and normalized when made, one encoding to the
environment and back, and the same settings from `use_plugin`, `plugin-wrapper` and the
environment the wrapper's process side reads."""

from __future__ import annotations

import inspect
import shlex
from dataclasses import fields, replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_convert.errors import UsageError
from shardy_convert.plugin import wrapper
from shardy_convert.plugin.cache import POLICIES
from shardy_convert.plugin.settings import EMITS, ENV, ENV_ON_ERROR, Settings
from shardy_convert.torch_xla import use_plugin

from .. import pjrt_plugin
from ..helpers import run

# The fields that configure torch_xla in the calling process, not the wrapper's process side.
TORCH_XLA = {"device_type", "create_options", "normalize_sharding_specs", "stablehlo_compile"}


@pytest.fixture(autouse=True)
def _no_dump_dir_in_the_environment(monkeypatch):
    monkeypatch.delenv("SHARDY_CONVERT_DUMP_DIR", raising=False)


def test_every_field_is_encoded_or_configures_torch_xla():
    assert {f.name for f in fields(Settings)} == set(ENV) | TORCH_XLA


@given(
    on_error=st.sampled_from(POLICIES),
    emit=st.sampled_from(EMITS),
    match=st.booleans(),
    propagation=st.booleans(),
    mesh_names=st.booleans(),
    cache=st.sampled_from([None, "/tmp/gspmd-cache"]),
    dump=st.sampled_from([None, "/tmp/dump dir"]),
)
def test_the_environment_carries_the_settings_there_and_back(
    on_error, emit, match, propagation, mesh_names, cache, dump
):
    settings = Settings(
        plugin="/opt/plugin.so",
        on_error=on_error,
        emit=emit,
        match_gspmd_boundary=match,
        match_gspmd_propagation=propagation,
        boundary_cache=cache,
        mesh_names=mesh_names,
        dump_dir=dump,
    )
    env = settings.to_env()
    assert set(env) <= set(ENV.values())
    assert all(isinstance(v, str) for v in env.values())
    assert Settings.from_env(env) == settings


def test_torch_xlas_fields_stay_in_the_calling_process():
    settings = Settings(plugin="/p.so", device_type="tt", create_options={"b": 2, "a": 1})
    assert Settings.from_env(settings.to_env()) == replace(
        settings, device_type="SHARDY", create_options=()
    )


def test_the_default_environment_names_the_plugin_and_the_policy_only():
    assert Settings(plugin="/p.so").to_env() == {
        "SHARDY_CONVERT_PLUGIN": "/p.so",
        "SHARDY_CONVERT_ON_ERROR": "raise",
    }


def test_made_normalized():
    settings = Settings(
        plugin="~/plugin.so",
        emit=None,
        create_options={"b": 2, "a": 1},
        device_type="tt",
        boundary_cache=True,
        dump_dir="relative/dump",
    )
    assert settings.plugin == str(Path.home() / "plugin.so")
    assert settings.emit == "portable"
    assert settings.create_options == (("a", 1), ("b", 2))
    assert settings.device_type == "TT"
    assert settings.boundary_cache.endswith("gspmd-boundary")
    assert settings.dump_dir == str(Path("relative/dump").resolve())
    assert replace(settings) == settings  # normalizing again changes nothing


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"on_error": "ignore"}, "on_error must be one of raise, passthrough, not 'ignore'"),
        ({"emit": "hlo"}, "emit must be one of portable, text, bytecode, not 'hlo'"),
    ],
)
def test_a_value_no_setting_takes_is_a_usage_error(changes, message):
    with pytest.raises(UsageError, match=message):
        Settings(**changes)


def test_a_bad_environment_names_its_variables():
    with pytest.raises(UsageError, match=f"not 'ignore' \\(from the environment: {ENV_ON_ERROR}="):
        Settings.from_env({ENV_ON_ERROR: "ignore"})


def test_the_process_side_reads_its_session_from_the_environment(monkeypatch, tmp_path):
    settings = Settings(
        plugin=pjrt_plugin.plugin_path(),
        on_error="passthrough",
        emit="text",
        mesh_names=False,
        dump_dir=tmp_path / "dump",
    )
    for key, value in settings.to_env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(wrapper, "_session", None)
    try:
        session = wrapper.session()
        assert session.settings == settings
        assert session.dump is not None
        assert session.dump.path == tmp_path / "dump"
    finally:
        wrapper.use_session(None)


def test_use_plugin_takes_every_setting():
    parameters = set(inspect.signature(use_plugin).parameters)
    named = {"plugin": "library_path"}
    assert {named.get(f.name, f.name) for f in fields(Settings)} <= parameters


def test_plugin_wrapper_offers_every_setting_of_the_wrapper(tmp_path):
    """Each encoded setting is a flag of `plugin-wrapper`, and what it prints reads back as
    the settings its flags name."""
    plugin = pjrt_plugin.plugin_path()
    args = [
        "plugin-wrapper",
        plugin,
        "--on-error",
        "passthrough",
        "--emit",
        "bytecode",
        "--match-gspmd-boundary",
        "--match-gspmd-propagation",
        "--boundary-cache",
        tmp_path / "cache",
        "--no-mesh-names",
        "--dump-dir",
        tmp_path / "dump dir",
    ]
    flags = {a.split("=")[0].removeprefix("--no-") for a in map(str, args) if a.startswith("--")}
    assert {name.replace("_", "-") for name in ENV if name != "plugin"} == {
        f.removeprefix("--") for f in flags
    }
    result = run(*args)
    assert result.exit_code == 0, result.output
    exports = [
        shlex.split(line.removeprefix("export "))[0] for line in result.output.splitlines()[1:]
    ]
    env = dict(line.split("=", 1) for line in exports)
    assert Settings.from_env(env) == Settings(
        plugin=plugin,
        on_error="passthrough",
        emit="bytecode",
        match_gspmd_boundary=True,
        match_gspmd_propagation=True,
        boundary_cache=str(tmp_path / "cache"),
        mesh_names=False,
        dump_dir=tmp_path / "dump dir",
    )


@pytest.mark.parametrize(
    ("given", "kept"),
    [("tt", "TT"), ("SHARDY", "SHARDY"), ("CPU_SHARDY", "CPU_SHARDY"), ("Tpu", "TPU")],
)
def test_a_device_type_torch_xla_runs_the_wrapper_under(given, kept):
    assert Settings(device_type=given).device_type == kept


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("cpu", "torch_xla then runs its built-in CPU client and never loads a plugin"),
        ("MY_DEV", "reports the part before \"_\" as the device type \\('MY'\\)"),
        ("my-dev", "letters, digits and _"),
        ("", "letters, digits and _"),
    ],
)
def test_a_device_type_that_cannot_work_is_refused_saying_why(given, why):
    with pytest.raises(UsageError, match=why):
        Settings(device_type=given)

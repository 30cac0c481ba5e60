"""The torch_xla entry points in a Python without torch_xla (issue 24): a MissingDependencyError
(a ShardyConvertError, and an ImportError) that says what to install, raised before anything
changes, never a bare ModuleNotFoundError from deep inside the registration.

torch_xla is hidden from this process with `sys.modules["torch_xla"] = None` (what makes an
import of it fail), so the tests hold in the venv that has torch_xla too.
"""

from __future__ import annotations

import os
import sys

import pytest

from shardy_convert.errors import MissingDependencyError, ShardyConvertError
from shardy_convert.plugin.torch_xla import registration
from shardy_convert.torch_xla import record, record_meshes, use_plugin

from ..pjrt_plugin import plugin_path

INSTALL = "pip install torch==2.9.0 torch-xla==2.9.0"


@pytest.fixture
def no_torch_xla(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_xla", None)
    with pytest.raises(ImportError):
        import torch_xla  # noqa: F401  (hidden: the tests below see a Python without it)


def test_use_plugin_without_torch_xla_says_what_to_install_and_changes_nothing(no_torch_xla):
    before = dict(os.environ)
    with pytest.raises(MissingDependencyError) as caught:
        use_plugin(plugin_path(), create_options={"cpu_device_count": 8})
    error = caught.value
    assert isinstance(error, ShardyConvertError)
    assert isinstance(error, ImportError)
    assert str(error) == (
        f"use_plugin needs torch_xla, and this Python ({sys.executable}) has none: install "
        f"torch and torch_xla 2.9 beside shardy-convert ({INSTALL})"
    )
    assert dict(os.environ) == before  # no PJRT_DEVICE, no settings' encoding
    assert registration.installed_device_type() is None


def test_bad_arguments_are_still_usage_errors_first(no_torch_xla, tmp_path):
    from shardy_convert.errors import UsageError

    with pytest.raises(UsageError, match="does not exist"):
        use_plugin(tmp_path / "missing.so")


@pytest.mark.parametrize(
    ("call", "name"),
    [(record, "record"), (lambda: record_meshes("meshes.json"), "record_meshes")],
    ids=["record", "record_meshes"],
)
def test_the_recorders_without_torch_xla_say_what_to_install(no_torch_xla, call, name):
    with pytest.raises(MissingDependencyError, match=rf"^{name} needs torch_xla, .*\({INSTALL}\)$"):
        call()


def test_a_torch_xla_that_does_not_import_is_named_with_its_error(monkeypatch):
    """Installed but broken (torch missing beside it, a version mismatch): the registration's
    import error comes back saying what torch_xla needs."""
    monkeypatch.setitem(sys.modules, "torch_xla", None)
    with pytest.raises(MissingDependencyError) as caught:
        registration._register("SHARDY", "/none.so", {})
    assert str(caught.value).startswith("use_plugin cannot import torch_xla (ModuleNotFoundError")
    assert str(caught.value).endswith(f"it needs torch and torch_xla 2.9 ({INSTALL})")
    assert isinstance(caught.value.__cause__, ImportError)

"""`shardy_convert.torch_xla.cpu_plugin_path()`: where a user finds OpenXLA's CPU plugin to run
`use_plugin` and `plugin-wrapper` on (docs/getting-started.md), without knowing the layout of
the xla-cpu-pjrt wheel."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from shardy_convert.errors import ShardyConvertError
from shardy_convert.plugin import plugin_library
from shardy_convert.torch_xla import cpu_plugin_path


def test_it_names_a_pjrt_plugin_the_wrapper_takes():
    path = cpu_plugin_path()
    assert path.endswith("/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so")
    assert plugin_library.why_not_a_plugin(path) is None


def test_the_shell_line_the_docs_give_prints_it():
    line = "from shardy_convert.torch_xla import cpu_plugin_path; print(cpu_plugin_path())"
    out = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True, check=True)
    assert out.stdout == cpu_plugin_path() + "\n"
    assert "torch" not in out.stderr  # no torch_xla needed to find the plugin


def test_without_the_package_it_says_what_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ShardyConvertError, match=r"pip install xla-cpu-pjrt"):
        cpu_plugin_path()


def test_a_package_without_the_library_is_named(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_loader(plugin_library.CPU_PLUGIN_PACKAGE, loader=None)
    spec.submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(ShardyConvertError, match=r"holds no xla_cpu_pjrt\.so"):
        cpu_plugin_path()

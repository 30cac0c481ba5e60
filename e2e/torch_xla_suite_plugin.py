"""A pytest plugin that runs a test suite through shardy-convert's wrapper: `use_plugin` on
xla-cpu-pjrt with the README's defaults, before pytest imports a test file (torch_xla's own
suite reads `xr.device_type()` in skip conditions at import). Loaded with `-p
e2e.torch_xla_suite_plugin` by e2e/torch_xla_suite.py; the suite's files stay unedited.

SHARDY_SUITE_DEVICES: the plugin's CPU devices (default 8). At the end it prints the wrapper's
counters, so a log says how many programs were converted, passed through or refused.
"""

from __future__ import annotations

import os

_HANDLE = []


def pytest_configure(config):
    from shardy_convert.torch_xla import use_plugin
    from tests import pjrt_plugin

    devices = int(os.environ.get("SHARDY_SUITE_DEVICES", "8"))
    handle = use_plugin(pjrt_plugin.plugin_path(), create_options={"cpu_device_count": devices})
    _HANDLE.append(handle)


def pytest_terminal_summary(terminalreporter):
    for handle in _HANDLE:
        terminalreporter.write_line(f"shardy-convert: {handle.counters}")

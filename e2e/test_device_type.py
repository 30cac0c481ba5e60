"""The device type the user names (`use_plugin(device_type=...)`) is the one torch_xla runs
on: `xr.device_type()` says it, and the programs still go through the wrapper. torch_xla 2.9's
own rules for the name (docs/plugin.md): "CPU" would run its built-in CPU client, never the
plugin, so it is refused; "CPU_<word>" reports "CPU" while the wrapper runs."""

from __future__ import annotations

import numpy as np
import pytest

from .compare import differences
from .test_torch_xla import _finish, _start

EXPECTED = np.arange(64, dtype=np.float32).reshape(8, 8)[:, ::-1] + 1  # a @ flipped eye + 1


def ran(tmp_path, device_type: str) -> dict:
    out = tmp_path / device_type
    return _finish(_start("sharded_matmul", "wrapper", out, "--device-type", device_type), out)


@pytest.mark.parametrize(
    ("device_type", "reported"),
    [("tt", "TT"), ("CPU_SHARDY", "CPU")],
    ids=["a_name_of_its_own", "cpu_and_a_word"],
)
def test_torch_xla_runs_on_the_device_type_named(tmp_path, device_type, reported):
    facts = ran(tmp_path, device_type)
    assert "error" not in facts, facts["error"] + "\n" + facts["log"][-3000:]
    assert facts["runtime"] == reported  # xr.device_type()
    assert facts["device"] == "xla:0"  # torch_xla.device(): SPMD's one virtual device
    assert facts["hw"] == "CPU"  # the real plugin's own platform name (xla-cpu-pjrt)
    assert facts["counters"]["converted"] >= 1  # through the wrapper, not the built-in runtime
    assert facts["counters"]["failed"] == facts["counters"]["passed_through"] == 0
    # floats from XLA: within the suite's scale-relative tolerance, never bit for bit
    assert not differences({"product": EXPECTED}, {"product": facts["arrays"]["product"]})


def test_cpu_itself_is_refused_before_anything_runs(tmp_path):
    facts = ran(tmp_path, "CPU")
    assert facts["error"].startswith('UsageError: the device type name must not be "CPU"'), facts
    assert "arrays" not in facts

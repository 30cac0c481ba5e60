"""The PJRT plugin wrapper between callers and plugins of other PJRT C API versions than the
header it was built against (API 0.81), proven with a plugin of the project's own:
newer_pjrt_plugin.c, built here with cc, reports a newer version (0.99, 0.120) and forwards to
xla-cpu-pjrt (0.81). The caller is pypjrt (0.114) in a child process (bridging.py), its argument
structs made older or newer where a test says so.

- Tables: a plugin newer than 0.114 (the newest version the wrapper knows) is served as 0.114,
  its table cut there: no caller reaches an entry the wrapper cannot intercept.
- Errors: the plugin's errors reach the caller with their payloads (PJRT_Error_ForEachPayload,
  0.99); the wrapper's own never reach the plugin, answer through the error function table of
  later versions too, and running out of memory while making one is an error, not success.
- Execute: an older caller's options are padded to what the newer plugin requires; a newer
  caller's arguments reach the plugin whole, but are refused for an executable that runs in
  another device order (their unknown fields could not be put in that order)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shardy_convert.plugin import wrapper
from tests import pjrt_plugin

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("newer_pjrt_plugin.c")
WRAPPER_SOURCES = ROOT / "shardy_convert" / "plugin" / "_wrapper"
INVALID_ARGUMENT, UNIMPLEMENTED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 3, 12, 8, 9


@pytest.fixture(scope="module")
def newer_plugin(tmp_path_factory) -> str:
    """The plugin, built against the header the wrapper is built against (xla-cpu-pjrt's)."""
    include = Path(pjrt_plugin.plugin_path()).parent / "include"
    out = tmp_path_factory.mktemp("newer_plugin") / "libnewer_pjrt_plugin.so"
    command = [
        os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-Wall", "-Werror",
        "-isystem", str(include), "-I", str(WRAPPER_SOURCES), str(SOURCE), "-o", str(out),
        "-ldl", "-lpthread",
    ]  # fmt: skip
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return str(out)


@pytest.fixture(scope="module")
def faulty_wrapper(tmp_path_factory) -> str:
    """The wrapper built as setup.py builds it, plus its test-only fault hook
    (-DSHARDY_CONVERT_FAULTS: SHARDY_CONVERT_FAIL_ALLOC names an allocation that fails), and the
    sanitizer of the build under test when one is preloaded (make test-asan, test-tsan)."""
    include = Path(pjrt_plugin.plugin_path()).parent / "include"
    out = tmp_path_factory.mktemp("faulty_wrapper") / "libpjrt_shardy_wrapper.so"
    preloaded = os.environ.get("LD_PRELOAD", "")
    sanitizer = (
        ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
        if "libasan" in preloaded
        else ["-fsanitize=thread"]
        if "libtsan" in preloaded
        else []
    )
    command = [
        os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-g", *sanitizer,
        "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror", "-DSHARDY_CONVERT_FAULTS",
        "-isystem", str(include), "-I", str(WRAPPER_SOURCES),
        str(WRAPPER_SOURCES / "pjrt_shardy_wrapper.c"), "-o", str(out), "-ldl", "-lpthread",
    ]  # fmt: skip
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return str(out)


def scenario(name: str, plugin: str, *, minor: int = 120, timeout: float = 300, **env) -> dict:
    """Runs bridging.py's `name` in a child process; its result."""
    child_env = {
        **os.environ,
        **wrapper.environment(plugin),
        "NEWER_PJRT_BASE": pjrt_plugin.plugin_path(),
        "NEWER_PJRT_MINOR": str(minor),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        **env,
    }
    child = subprocess.run(
        [sys.executable, "-m", "tests.plugin.bridging", name, plugin],
        capture_output=True, text=True, timeout=timeout, env=child_env, cwd=ROOT,
    )  # fmt: skip
    assert child.returncode == 0, child.stderr[-3000:]
    line = next(x for x in child.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


@pytest.mark.parametrize(
    ("minor", "plugin_table", "served"),
    [(120, [1160, [0, 120]], [1144, [0, 114]]), (99, [1104, [0, 99]], [1104, [0, 99]])],
    ids=["newer than the wrapper knows: cut at 0.114", "known: served whole"],
)
def test_the_table_handed_out_ends_where_the_wrapper_knows_the_api(
    newer_plugin, minor, plugin_table, served
):
    result = scenario("tables", newer_plugin, minor=minor)
    assert result == {"plugin": plugin_table, "wrapper": served}


def test_the_plugins_errors_pass_and_the_wrappers_never_reach_it(newer_plugin):
    result = scenario("errors", newer_plugin)
    assert result["plugins"] == {
        "code": INVALID_ARGUMENT,
        "message": "newer plugin: refused on request",
        "payloads": [["shardy-convert.test/origin", "newer plugin"]],
        "for_each_payload_failed": False,
    }
    assert result["plugin_saw_its_own"]
    too_small, hook = result["wrappers"]
    for error in (too_small, hook):
        table, api = error["table"], error["api"]
        assert table["struct_size"] == 56  # the function table of 0.114, laid out in full
        assert (table["code"], table["message"]) == (api["code"], api["message"])
        assert (api["code"], api["payloads"], table["payloads"]) == (INVALID_ARGUMENT, [], [])
        assert not api["for_each_payload_failed"]
    assert too_small["api"]["message"].startswith(
        "shardy-convert PJRT wrapper: unexpected PJRT_Client_Compile_Args size: "
        "expected at least 56, got 16"
    )
    assert hook["api"]["message"].startswith("shardy-convert: 1:1: cannot parse the module")
    assert result["plugin_saw_the_wrappers"] == [False, False]


def test_running_out_of_memory_making_an_error_is_an_error(newer_plugin):
    """The hook fails with a 256 MiB message, under a memory limit: the copy cannot be made,
    and the compile fails with the wrapper's preallocated out-of-memory error (it reported
    success before, with no executable)."""
    # One malloc arena: a thread's first malloc would reserve an arena of its own (64 MiB of
    # address space) and abort the process when the limit refuses it.
    env = {"SHARDY_CONVERT_HOOK": "__main__:huge_message_hook", "MALLOC_ARENA_MAX": "1"}
    for runtime, options in (("libasan", "ASAN_OPTIONS"), ("libtsan", "TSAN_OPTIONS")):
        if runtime in os.environ.get("LD_PRELOAD", ""):  # make test-asan, test-tsan
            env[options] = os.environ.get(options, "") + ":allocator_may_return_null=1"
    result = scenario("out_of_memory", newer_plugin, **env)
    assert result["same_error"]
    expected = {
        "code": RESOURCE_EXHAUSTED,
        "message": "shardy-convert PJRT wrapper: out of memory",
        "payloads": [],
        "for_each_payload_failed": False,
    }
    assert result["errors"] == [expected, expected]


def test_running_out_of_memory_recording_a_device_order_fails_and_destroys_the_executable(
    newer_plugin, faulty_wrapper
):
    """A program in another device order whose order cannot be recorded would run on the
    caller's devices unpermuted (the record was dropped silently before): the compile fails
    with RESOURCE_EXHAUSTED and the plugin's executable is destroyed; so does
    PJRT_LoadedExecutable_GetExecutable, its PJRT_Executable destroyed."""
    result = scenario(
        "order_out_of_memory",
        newer_plugin,
        SHARDY_CONVERT_WRAPPER_LIBRARY=faulty_wrapper,
        SHARDY_CONVERT_EXECUTABLE_CACHE="0",  # the third compile compiles again
    )
    out_of_memory = {
        "code": RESOURCE_EXHAUSTED,
        "message": "shardy-convert PJRT wrapper: out of memory",
    }
    assert result["compile"] == {"error": out_of_memory, "made": [0, 0], "executable": False}
    assert result["get_executable"] == {"error": out_of_memory, "made": [1, 0], "executable": True}
    assert result[""] == {"error": None, "made": [1, 1], "executable": True}


def test_the_stand_in_table_answers_every_error_entry(newer_plugin):
    """No plugin to wrap: a table of API 0.99 whose entries are each a stub of its own type,
    and whose error entries, PJRT_Error_ForEachPayload among them, are the wrapper's."""
    result = scenario("stand_in", newer_plugin, SHARDY_CONVERT_PLUGIN="")
    assert result["table"] == [1104, [0, 99]]
    error = result["error"]
    assert (error["code"], error["payloads"], error["for_each_payload_failed"]) == (
        FAILED_PRECONDITION,
        [],
        False,
    )
    assert error["message"].startswith("shardy-convert PJRT wrapper: no plugin to wrap")
    assert not result["plugin_saw_it"]


def test_an_older_callers_options_are_padded_for_the_newer_plugin(newer_plugin):
    result = scenario("execute", newer_plugin, SHARDY_EXECUTE="older_options")
    assert result["matmul"] == {"equal": True, "execute_args_size": 80}
    assert result["gather"] == {"equal": True, "execute_args_size": 80}
    assert result["direct"] == {
        "error": "newer plugin: Unexpected PJRT_ExecuteOptions size: expected 144, got 80"
    }


def test_a_newer_callers_arguments_reach_the_plugin_unless_they_need_reordering(newer_plugin):
    result = scenario("execute", newer_plugin, SHARDY_EXECUTE="newer_args")
    assert result["matmul"] == {"equal": True, "execute_args_size": 96}
    assert result["gather"]["error"].startswith(
        "shardy-convert PJRT wrapper: PJRT_LoadedExecutable_Execute_Args of 96 bytes, from a "
        "newer PJRT C API than the 80 this wrapper knows: this executable runs in another "
        "device order"
    )


def test_an_older_callers_arguments_it_cannot_read_are_refused(newer_plugin):
    result = scenario("execute", newer_plugin, SHARDY_EXECUTE="older_args")
    expected = (
        "shardy-convert PJRT wrapper: unexpected PJRT_LoadedExecutable_Execute_Args size: "
        "expected at least 80, got 72"
    )
    assert result["matmul"]["error"].startswith(expected)
    assert result["gather"]["error"].startswith(expected)


def plugin_state(result: dict) -> dict:
    keys = ("compiles", "live", "hits", "misses", "evictions", "entries")
    return {step: {k: facts[k] for k in keys} for step, facts in result.items()}


def test_an_identical_program_compiled_again_gets_the_executable_it_got_before(newer_plugin):
    """The gather (another device order: its record is shared too) compiled twice: the plugin
    compiled it once, both handles are the same executable and run right, and destroying both
    leaves it to the cache. Deleted, it is never handed out again: the next compile is the
    plugin's. The client's destroy lets go of what the cache held, each destroyed once."""
    result = scenario("executable_cache", newer_plugin)
    assert result["twice"]["same"]
    assert result["twice"]["runs"] == [True, True]
    assert result["first destroyed"]["runs"]
    again = result["deleted, compiled again"]
    # xla-cpu-pjrt's Delete frees nothing and IsDeleted stays false: the wrapper must not rely
    # on asking; the second compile went to the plugin (compiles 2 below).
    assert not again["same"]
    assert again["runs"]
    assert result["another program"]["runs"]
    assert plugin_state(result) == {
        "twice": dict(compiles=1, live=1, hits=1, misses=1, evictions=0, entries=1),
        "first destroyed": dict(compiles=1, live=1, hits=1, misses=1, evictions=0, entries=1),
        "both destroyed": dict(compiles=1, live=1, hits=1, misses=1, evictions=0, entries=1),
        "deleted, compiled again": dict(
            compiles=2, live=2, hits=2, misses=2, evictions=0, entries=1
        ),
        "deleted destroyed": dict(compiles=2, live=1, hits=2, misses=2, evictions=0, entries=1),
        "another program": dict(compiles=3, live=2, hits=2, misses=3, evictions=0, entries=2),
        "all destroyed": dict(compiles=3, live=2, hits=2, misses=3, evictions=0, entries=2),
        "client destroyed": dict(compiles=3, live=0, hits=2, misses=3, evictions=0, entries=0),
    }


def test_the_executable_cache_evicts_at_its_bound(newer_plugin):
    """SHARDY_CONVERT_EXECUTABLE_CACHE=1: the second program evicts the first, which its
    caller still holds (destroyed when that caller destroys it, not before)."""
    result = scenario("executable_cache", newer_plugin, SHARDY_CONVERT_EXECUTABLE_CACHE="1")
    state = plugin_state(result)
    assert state["another program"] == dict(
        compiles=3, live=2, hits=2, misses=3, evictions=1, entries=1
    )
    assert state["all destroyed"] == dict(
        compiles=3, live=1, hits=2, misses=3, evictions=1, entries=1
    )
    assert state["client destroyed"]["live"] == 0
    assert result["twice"]["same"]
    assert result["another program"]["runs"]


def test_an_executable_cache_of_0_compiles_every_time(newer_plugin):
    result = scenario("executable_cache", newer_plugin, SHARDY_CONVERT_EXECUTABLE_CACHE="0")
    assert not result["twice"]["same"]
    assert result["twice"]["runs"] == [True, True]
    state = plugin_state(result)
    assert state["twice"] == dict(compiles=2, live=2, hits=0, misses=0, evictions=0, entries=0)
    assert state["both destroyed"]["live"] == 0
    assert state["client destroyed"] == dict(
        compiles=5, live=0, hits=0, misses=0, evictions=0, entries=0
    )


def test_running_out_of_memory_for_the_cache_record_fails_the_compile(newer_plugin, faulty_wrapper):
    """The record that would cache a new executable is made before the plugin compiles: out
    of memory, the compile fails with RESOURCE_EXHAUSTED and the plugin made nothing."""
    result = scenario(
        "order_out_of_memory",
        newer_plugin,
        SHARDY_CONVERT_WRAPPER_LIBRARY=faulty_wrapper,
        FAULT_SITES="cache,",
    )
    out_of_memory = {
        "code": RESOURCE_EXHAUSTED,
        "message": "shardy-convert PJRT wrapper: out of memory",
    }
    assert result["cache"] == {"error": out_of_memory, "made": [0, 0], "executable": False}
    assert result[""] == {"error": None, "made": [1, 1], "executable": True}


@pytest.mark.parametrize("size", ["1", "64"])
def test_threads_compiling_and_destroying_the_same_programs_share_them_safely(newer_plugin, size):
    """Compiles, hits, evictions and destroys from four threads at once (make test-tsan
    watches the wrapper's side): no error, every compile answered (by the plugin or the
    cache), and nothing left once the client is destroyed."""
    result = scenario(
        "executable_cache_threads", newer_plugin, SHARDY_CONVERT_EXECUTABLE_CACHE=size
    )
    assert result["errors"] == []
    counts = result["counts"]
    assert counts["hits"] + counts["misses"] == 24
    if size == "64":  # at most each thread's first compile of each program misses
        assert counts["hits"] >= 16
    assert result["compiles"] == counts["misses"]
    assert result["live"] == [0, 0]

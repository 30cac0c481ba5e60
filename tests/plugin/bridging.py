"""A PJRT caller, run in a child process by test_newer_plugin.py: pypjrt (a caller of API 0.114)
loads the wrapper around the plugin named by SHARDY_CONVERT_PLUGIN, drives one scenario and
prints what it saw as one JSON object. `python -m tests.plugin.bridging SCENARIO NEWER_PLUGIN`.

pypjrt's `Plugin` gives every entry by name and every argument struct in its 0.114 layout; a
struct's `struct_size` set smaller or larger makes the caller older or newer than that."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys

import numpy as np
import pypjrt

from shardy_convert.errors import ShardyConvertError
from shardy_convert.plugin import wrapper
from tests import pjrt_plugin
from tests.conftest import TESTDATA

VISITOR = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p
)
# PJRT_ExecuteOptions of API 0.75 (torch_xla 2.9) ends after `context`.
OPTIONS_0_75 = 80
HUGE = "x" * (256 << 20)  # made before memory is limited (scenario out_of_memory)


def huge_message_hook(code: bytes, form: bytes, options: bytes) -> str:
    """SHARDY_CONVERT_HOOK of scenario out_of_memory: a failure whose message cannot be copied."""
    return HUGE


_KEPT: list = []


def address(data: bytes) -> int:
    """The address of a copy of `data` kept alive for the process (pypjrt's fields are void*)."""
    buffer = ctypes.create_string_buffer(data, len(data))
    _KEPT.append(buffer)
    return ctypes.addressof(buffer)


def program(api, code: bytes):
    return api.args(
        "PJRT_Program", code=address(code), code_size=len(code), format=address(b"mlir"),
        format_size=4,
    )  # fmt: skip


class Caller:
    """The wrapper as a PJRT caller sees it, and the plugin it wraps."""

    def __init__(self, newer_plugin: str):
        self.api = pypjrt.Plugin(wrapper.library_path())
        self.plugin = ctypes.CDLL(newer_plugin)
        self.plugin.NewerPluginSawError.argtypes = [ctypes.c_void_p]
        self.plugin.NewerPluginLastExecuteArgsSize.restype = ctypes.c_size_t

    def raw(self, entry: str, args) -> int:
        """Calls `entry`, returning its PJRT_Error* (0 for none) instead of raising."""
        return self.api.fn(entry)(ctypes.byref(args)) or 0

    def describe(self, error: int) -> dict:
        """An error through the wrapper's entries: code, message, payloads; then destroyed."""
        api = self.api
        message = api.args("PJRT_Error_Message_Args", error=error)
        api.fn("PJRT_Error_Message")(ctypes.byref(message))
        code = api.args("PJRT_Error_GetCode_Args", error=error)
        assert self.raw("PJRT_Error_GetCode", code) == 0
        payloads = []

        def visit(key, key_size, value, value_size, _):
            payloads.append(
                [
                    ctypes.string_at(key, key_size).decode(),
                    ctypes.string_at(value, value_size).decode(),
                ]
            )

        visitor = VISITOR(visit)
        each = api.args("PJRT_Error_ForEachPayload_Args", error=error)
        each.visitor = ctypes.cast(visitor, ctypes.c_void_p)
        visited = self.raw("PJRT_Error_ForEachPayload", each)
        return {
            "code": int(code.code),
            "message": ctypes.string_at(message.message, message.message_size).decode(),
            "payloads": payloads,
            "for_each_payload_failed": visited != 0,
        }

    def destroy(self, error: int) -> None:
        self.api.fn("PJRT_Error_Destroy")(
            ctypes.byref(self.api.args("PJRT_Error_Destroy_Args", error=error))
        )

    def through_its_table(self, error: int) -> dict:
        """The error's own function table (API > 0.105: a caller may use it directly)."""
        abi = self.api.abi
        table = ctypes.cast(
            ctypes.cast(error, ctypes.POINTER(ctypes.c_void_p))[0],
            ctypes.POINTER(abi.PJRT_Error_FunctionTable),
        ).contents
        message, size = ctypes.c_void_p(), ctypes.c_size_t()
        ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(table.message)(
            error, ctypes.byref(message), ctypes.byref(size)
        )
        code = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(table.get_code)(error)
        payloads = []
        visitor = VISITOR(lambda *a: payloads.append(1))
        ctypes.CFUNCTYPE(None, ctypes.c_void_p, VISITOR, ctypes.c_void_p)(table.for_each_payload)(
            error, visitor, None
        )
        return {
            "struct_size": int(table.struct_size),
            "code": code,
            "message": ctypes.string_at(message, size.value).decode(),
            "payloads": payloads,
        }

    def client(self, path: str | None = None):
        """A client of the wrapper (or of the plugin at `path`) on 8 CPU devices."""
        path = path or wrapper.library_path()
        create = pypjrt.Client.create(path, options={"cpu_device_count": 8})
        ours = pjrt_plugin.PluginClient.__new__(pjrt_plugin.PluginClient)
        ours._pypjrt, ours.path, ours.client, ours.num_devices = pypjrt, path, create, 8
        return ours


def tables(newer_plugin: str) -> dict:
    caller, plugin = Caller(newer_plugin), pypjrt.Plugin(newer_plugin)
    return {
        "plugin": [plugin.api_struct_size, list(plugin.api_version)],
        "wrapper": [caller.api.api_struct_size, list(caller.api.api_version)],
    }


def errors(newer_plugin: str) -> dict:
    caller = Caller(newer_plugin)
    api = caller.api
    # The plugin's own error, through the wrapper: its payload visited by the plugin.
    refuse = (api.abi.PJRT_NamedValue * 1)()
    refuse[0].struct_size = api.abi.PJRT_NamedValue_STRUCT_SIZE
    refuse[0].name, refuse[0].name_size = address(b"newer_plugin_refuse"), 19
    refuse[0].type, refuse[0].value_size = api.abi.PJRT_NamedValue_kBool, 1
    create = api.args("PJRT_Client_Create_Args", create_options=ctypes.addressof(refuse))
    create.num_options = 1
    theirs = caller.raw("PJRT_Client_Create", create)
    plugins = caller.describe(theirs)
    caller.destroy(theirs)
    # The wrapper's own: an older caller's struct it cannot read, and a hook's failure.
    client = caller.client().client
    small = api.args("PJRT_Client_Compile_Args", client=client._check())
    small.struct_size = 16
    not_a_program = program(api, b"not a program")
    failing = api.args("PJRT_Client_Compile_Args", client=client._check())
    failing.program = ctypes.addressof(not_a_program)
    made = [caller.raw("PJRT_Client_Compile", small), caller.raw("PJRT_Client_Compile", failing)]
    wrappers = [{"table": caller.through_its_table(e), "api": caller.describe(e)} for e in made]
    for e in made:
        caller.destroy(e)
    return {
        "plugins": plugins,
        "plugin_saw_its_own": bool(caller.plugin.NewerPluginSawError(theirs)),
        "wrappers": wrappers,
        "plugin_saw_the_wrappers": [bool(caller.plugin.NewerPluginSawError(e)) for e in made],
    }


def out_of_memory(newer_plugin: str) -> dict:
    caller = Caller(newer_plugin)
    client = caller.client().client
    api = caller.api
    anything = program(api, b"x")
    compile_ = api.args("PJRT_Client_Compile_Args", client=client._check())
    compile_.program = ctypes.addressof(anything)
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    # Room for everything but the message's copy (the plugin's threads go on meanwhile).
    resource.setrlimit(resource.RLIMIT_AS, (size + (128 << 20), resource.RLIM_INFINITY))
    made = [caller.raw("PJRT_Client_Compile", compile_) for _ in range(2)]
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    described = [caller.describe(e) for e in made]
    for e in made:
        caller.destroy(e)
    return {"same_error": made[0] == made[1] != 0, "errors": described}


def stand_in(newer_plugin: str) -> dict:
    """The wrapper with no plugin to wrap (SHARDY_CONVERT_PLUGIN=""): its stand-in table, and
    an error of it through every error entry, PJRT_Error_ForEachPayload included."""
    caller = Caller(newer_plugin)
    api = caller.api
    create = api.args("PJRT_Client_Create_Args")
    error = caller.raw("PJRT_Client_Create", create)
    described = caller.describe(error)
    caller.destroy(error)
    return {
        "table": [api.api_struct_size, list(api.api_version)],
        "error": described,
        "plugin_saw_it": bool(caller.plugin.NewerPluginSawError(error)),
    }


def order_out_of_memory(newer_plugin: str) -> dict:
    """Recording the device order of a program compiled in another order runs out of memory
    (the wrapper's test build, SHARDY_CONVERT_FAIL_ALLOC names where): at the compile, and at
    PJRT_LoadedExecutable_GetExecutable. Each fails, and what the plugin made for it is
    destroyed; then the same with memory enough."""
    from tests.plugin.test_wrapper import GATHER

    caller = Caller(newer_plugin)
    caller.plugin.NewerPluginLiveExecutables.restype = ctypes.c_long
    ours = caller.client()
    artifact = pjrt_plugin.portable_artifact(GATHER, "1.13.0")

    def live() -> list[int]:
        return [caller.plugin.NewerPluginLiveExecutables(k) for k in (1, 0)]

    def attempt(site: str) -> dict:
        os.environ["SHARDY_CONVERT_FAIL_ALLOC"] = site
        before, error, exe = live(), None, None
        try:
            exe = ours.client.compile(artifact, options=compile_options(8))
            exe._executable()
        except pypjrt.errors.PjrtError as e:
            error = {"code": e.code, "message": str(e)}
        os.environ.pop("SHARDY_CONVERT_FAIL_ALLOC")
        made = [now - then for now, then in zip(live(), before)]
        return {"error": error, "made": made, "executable": exe is not None}

    sites = os.environ.get("FAULT_SITES", "compile,get_executable,").split(",")
    return {site: attempt(site) for site in sites}


class _CacheSteps:
    """What the plugin compiled and holds, and the wrapper cache's counts, step by step."""

    def __init__(self, newer_plugin: str):
        caller = Caller(newer_plugin)
        self.plugin = caller.plugin
        self.plugin.NewerPluginLiveExecutables.restype = ctypes.c_long
        self.plugin.NewerPluginCompiles.restype = ctypes.c_long
        self.ours = caller.client()
        self.steps: dict[str, dict] = {}

    def step(self, name: str, **facts) -> None:
        counts = wrapper.executable_cache_counts()
        live = self.plugin.NewerPluginLiveExecutables(1)
        self.steps[name] = {"compiles": self.plugin.NewerPluginCompiles(), "live": live}
        self.steps[name].update(counts, **facts)

    def runs(self, exe, args, want) -> bool:
        return all(np.array_equal(g, w) for g, w in zip(self.ours.run(exe, args), want))


def executable_cache(newer_plugin: str) -> dict:
    """The wrapper's executable cache (SHARDY_CONVERT_EXECUTABLE_CACHE as the test sets it):
    the gather (another device order) compiled twice, each executable run and destroyed; then
    Deleted and compiled again; the matmul after it; then the client destroyed. What the
    plugin compiled and holds, and the cache's counts, after each step."""
    from tests.plugin.test_wrapper import GATHER, GATHER_ARGS

    s = _CacheSteps(newer_plugin)
    gather = pjrt_plugin.portable_artifact(GATHER, "1.13.0")
    matmul, matmul_args, matmul_want = programs()["matmul"]
    matmul = pjrt_plugin.portable_artifact(matmul, "1.13.0")
    want = (GATHER_ARGS[0][GATHER_ARGS[1]],)

    first = s.ours.compile(gather, 8, shardy=False)
    second = s.ours.compile(gather, 8, shardy=False)
    same = first.handle.address == second.handle.address
    s.step(
        "twice",
        same=same,
        runs=[s.runs(first, GATHER_ARGS, want), s.runs(second, GATHER_ARGS, want)],
    )
    first.handle.close()
    s.step("first destroyed", runs=s.runs(second, GATHER_ARGS, want))
    second.handle.close()
    s.step("both destroyed")
    third = s.ours.compile(gather, 8, shardy=False)
    third.handle.release_device_memory()  # PJRT_LoadedExecutable_Delete
    fourth = s.ours.compile(gather, 8, shardy=False)
    s.step(
        "deleted, compiled again",
        same=third.handle.address == fourth.handle.address,
        deleted=[third.handle.is_deleted, fourth.handle.is_deleted],
        runs=s.runs(fourth, GATHER_ARGS, want),
    )
    third.handle.close()
    s.step("deleted destroyed")
    other = s.ours.compile(matmul, 8, shardy=False)
    s.step("another program", runs=s.runs(other, matmul_args, matmul_want))
    fourth.handle.close(), other.handle.close()
    s.step("all destroyed")
    s.ours.client.close()
    s.step("client destroyed")
    return s.steps


def executable_cache_threads(newer_plugin: str) -> dict:
    """Four threads compile the gather and the matmul in turn, each executable's
    PJRT_Executable taken and both destroyed, 6 rounds (SHARDY_CONVERT_EXECUTABLE_CACHE=1:
    every other compile evicts what another thread may be holding or destroying). Then the
    client destroyed: what the plugin holds, and any thread's error."""
    import threading

    from tests.plugin.test_wrapper import GATHER

    caller = Caller(newer_plugin)
    plugin = caller.plugin
    plugin.NewerPluginLiveExecutables.restype = plugin.NewerPluginCompiles.restype = ctypes.c_long
    ours = caller.client()
    artifacts = [
        pjrt_plugin.portable_artifact(GATHER, "1.13.0"),
        pjrt_plugin.portable_artifact(programs()["matmul"][0], "1.13.0"),
    ]
    errors = []

    def work(k: int) -> None:
        try:
            for i in range(6):
                exe = ours.client.compile(artifacts[(k + i) % 2], options=compile_options(8))
                exe._executable()
                exe.close()
        except Exception as e:  # reported by the result
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = wrapper.executable_cache_counts()
    ours.client.close()
    return {
        "errors": errors,
        "compiles": plugin.NewerPluginCompiles(),
        "counts": counts,
        "live": [plugin.NewerPluginLiveExecutables(k) for k in (1, 0)],
    }


def compile_options(partitions: int):
    return pypjrt.CompileOptions(
        num_replicas=1, num_partitions=partitions, use_spmd_partitioning=True
    )


def execute_args_of_size(size: int):
    """Makes pypjrt's Execute arguments `size` bytes long: a newer caller's with fields past
    execute_device (zeros), or an older caller's."""
    original = pypjrt.Plugin.args

    def args(self, struct_name: str, **kw):
        if struct_name != "PJRT_LoadedExecutable_Execute_Args":
            return original(self, struct_name, **kw)
        base = self.abi.PJRT_LoadedExecutable_Execute_Args
        longer = type("Longer", (base,), {"_fields_": [("later", ctypes.c_uint64 * 4)]})
        obj = longer()
        for k, v in kw.items():
            setattr(obj, k, v)
        obj.struct_size = size
        return obj

    pypjrt.Plugin.args = args


def options_of_size(size: int) -> None:
    """Makes pypjrt's PJRT_ExecuteOptions those of an older caller (API 0.75: 80 bytes)."""
    original = pypjrt.Plugin.args

    def args(self, struct_name: str, **kw):
        obj = original(self, struct_name, **kw)
        if struct_name == "PJRT_ExecuteOptions":
            obj.struct_size = size
        return obj

    pypjrt.Plugin.args = args


def programs() -> dict:
    """name: (GSPMD text, arguments, the outputs of xla-cpu-pjrt's own run): the matmul of
    testdata/torch_xla (identity device order) and test_wrapper's gather (another order)."""
    from tests.plugin.test_wrapper import GATHER, GATHER_ARGS

    matmul = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(8, 8), (8, 8), (16, 8), (8, 16)]]
    want = pjrt_plugin.run(pjrt_plugin.compile(matmul, 8, shardy=False), args)
    return {
        "matmul": (matmul, args, want),
        "gather": (GATHER, GATHER_ARGS, [GATHER_ARGS[0][GATHER_ARGS[1]]]),
    }


def run(caller: Caller, program: tuple, path: str | None = None) -> dict:
    """Compiles `program` through the wrapper (or straight on the plugin at `path`), runs it,
    compares with the expected outputs."""
    text, args, want = program
    ours = caller.client(path)
    exe = ours.compile(pjrt_plugin.portable_artifact(text, "1.13.0"), 8, shardy=False)
    try:
        got = ours.run(exe, args)
    except ShardyConvertError as e:  # pjrt_plugin's: "the PJRT plugin failed to run ...: WHY"
        return {"error": str(e).split(": ", 1)[1]}
    return {
        "equal": all(np.array_equal(g, w) for g, w in zip(got, want)),
        "execute_args_size": caller.plugin.NewerPluginLastExecuteArgsSize(),
    }


def execute(newer_plugin: str) -> dict:
    """SHARDY_EXECUTE: `older_options`, `newer_args` or `older_args`, then the programs."""
    how = os.environ.get("SHARDY_EXECUTE", "")
    cases = programs()  # before pypjrt is made older or newer: the reference runs as it is
    if how == "older_options":
        options_of_size(OPTIONS_0_75)
    elif how == "newer_args":
        execute_args_of_size(96)
    elif how == "older_args":
        execute_args_of_size(72)
    caller = Caller(newer_plugin)
    result = {name: run(caller, case) for name, case in cases.items()}
    if how == "older_options":  # the same options straight to the plugin: what the wrapper pads
        result["direct"] = run(caller, cases["matmul"], newer_plugin)
    return result


if __name__ == "__main__":
    scenario, newer = sys.argv[1], sys.argv[2]
    result = {
        "tables": tables,
        "errors": errors,
        "out_of_memory": out_of_memory,
        "execute": execute,
        "stand_in": stand_in,
        "order_out_of_memory": order_out_of_memory,
        "executable_cache": executable_cache,
        "executable_cache_threads": executable_cache_threads,
    }[scenario](newer)
    print("RESULT " + json.dumps(result))

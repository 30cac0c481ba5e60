"""JAX's own PJRT C API client on the wrapper: run as a child process,

    python -m tests.plugin.jax_through_wrapper PLUGIN MODE

PLUGIN is the real plugin's library (xla-cpu-pjrt here; jax-cuda's on a GPU machine), MODE
`shardy` (JAX lowers Shardy), `gspmd` (JAX lowers GSPMD strings: the wrapper converts them) or
`versions` (the PJRT API versions of the plugin and of the wrapper over it, and nothing else);
with SHARDY_CONVERT_HOOK naming `raising_hook`, every compile fails with its message.
The wrapper is registered as a JAX plugin named `shardywrap` and made JAX's only platform, so
every program JAX compiles reaches the plugin through it, from JAX's compile threads (threads
Python did not start) and with JAX's PJRT C API, which is newer than the header the wrapper is
built against. Prints one line, `FACTS {json}`: what ran and how far the results are from
numpy's.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import traceback

# PJRT_Api: struct_size, extension_start, then PJRT_Api_Version (struct_size, extension_start,
# major_version, minor_version): the version's ints at bytes 32 and 36.
_MAJOR, _MINOR = 32, 36


def api_version(path: str) -> list[int]:
    """[major, minor, the table's struct_size] of the PJRT_Api a library's GetPjrtApi gives."""
    lib = ctypes.CDLL(path)
    lib.GetPjrtApi.restype = ctypes.c_void_p
    api = lib.GetPjrtApi()
    major = ctypes.c_int.from_address(api + _MAJOR).value
    minor = ctypes.c_int.from_address(api + _MINOR).value
    return [major, minor, ctypes.c_size_t.from_address(api).value]


def raising_hook(code: bytes, form: bytes, options: bytes):
    """SHARDY_CONVERT_HOOK=tests.plugin.jax_through_wrapper:raising_hook: every compile fails
    with this message, which must reach JAX as the compile's error."""
    raise RuntimeError("jax_through_wrapper: this hook always fails")


def _step(facts: dict, name: str, fn) -> None:
    try:
        facts[name] = fn()
    except Exception as e:  # reported to the test, which says what it expected
        facts[name] = f"error: {type(e).__name__}: {str(e)[:2000]}"
        traceback.print_exc()


def _programs(facts: dict) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    facts["devices"] = [f"{d.platform}:{d.id}" for d in jax.devices()]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 128), dtype=np.float32)
    w = rng.standard_normal((128, 64), dtype=np.float32)

    def relative(got, want) -> float:
        return float(np.max(np.abs(np.asarray(got) - want)) / np.max(np.abs(want)))

    def plain() -> float:
        return relative(jax.jit(lambda x, w: jnp.tanh(x @ w).sum(0))(x, w), np.tanh(x @ w).sum(0))

    def sharded() -> dict:
        mesh = jax.sharding.Mesh(np.array(jax.devices()), ("d",))
        rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d", None))
        f = jax.jit(lambda x, w: x @ w, in_shardings=(rows, None), out_shardings=rows)
        text = f.lower(x, w).as_text()
        lowered = [m for m in ("mhlo.sharding", "sdy.sharding") if m in text]
        return {"lowered_with": lowered, "relative": relative(f(x, w), x @ w)}

    _step(facts, "plain", plain)
    _step(facts, "sharded", sharded)


def main() -> None:
    plugin, mode = sys.argv[1], sys.argv[2]
    os.environ["SHARDY_CONVERT_PLUGIN"] = plugin
    from shardy_convert.plugin import wrapper

    facts: dict = {"mode": mode, "plugin_api": api_version(plugin)}
    if mode == "versions":
        facts["wrapper_api"] = api_version(wrapper.library_path())
        print("FACTS " + json.dumps(facts), flush=True)
        return
    import jax
    from jax._src import xla_bridge  # JAX has no public call that registers a plugin by path

    facts["jax"] = jax.__version__
    xla_bridge.register_plugin("shardywrap", priority=500, library_path=wrapper.library_path())
    jax.config.update("jax_platforms", "shardywrap")
    jax.config.update("jax_use_shardy_partitioner", mode == "shardy")
    _programs(facts)
    facts["counters"] = dict(vars(wrapper.session().counters))
    print("FACTS " + json.dumps(facts), flush=True)


if __name__ == "__main__":
    main()

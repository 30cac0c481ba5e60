"""What `make test-sdist` runs with the Python of a fresh venv holding shardy-convert installed
from its sdist (pip built the PJRT wrapper there with the C compiler): the wrapper loaded as a
PJRT plugin over OpenXLA's CPU plugin (xla-cpu-pjrt, through pypjrt), compiling the README's
torch_xla matmul as a PJRT client hands it (a portable artifact, GSPMD, Shardy off): the
wrapper converts it and compiles it with Shardy, its parameters placed as GSPMD places them.

    python tests/installed_smoke.py testdata/torch_xla/matmul_2x4.mlir

Imports nothing from the source tree (run it from another folder): the installed package only.
Prints what it checked; exits 1 when something is not as it should be.
"""

from __future__ import annotations

import os
import sys


def main(path: str) -> int:
    import pypjrt
    from jaxlib.mlir.dialects import stablehlo

    import shardy_convert
    from shardy_convert.plugin import wrapper
    from shardy_convert.plugin.settings import Settings
    from shardy_convert.sharding import parse
    from shardy_convert.torch_xla import cpu_plugin_path
    from shardy_convert.xla import compat

    here = os.path.dirname(os.path.abspath(shardy_convert.__file__))
    print(f"shardy_convert from {here}")
    library = wrapper.library_path()
    print(f"wrapper {library}")
    os.environ.update(Settings(plugin=cpu_plugin_path()).to_env())
    client = pypjrt.Client.create(library, options={"cpu_device_count": 8})
    text = open(path).read()
    program = compat.serialize_portable_artifact(text, stablehlo.get_minimum_version())
    options = pypjrt.CompileOptions(
        num_replicas=1, num_partitions=8, use_spmd_partitioning=True, use_shardy_partitioner=False
    )
    executable = client.compile(program, options=options)
    counters = wrapper.session().counters
    module = compat.hlo_module_from_proto(_optimized_program(executable))
    got = [parse(str(compat.sharding_from_proto(p))) for p in module.spmd_parameters_shardings]
    want = [parse(s) for s in _argument_shardings(text)]
    print(f"devices {client.device_count}; programs converted {counters.converted}")
    print(f"parameters placed as GSPMD places them: {got == want}")
    return 0 if (client.device_count == 8 and counters.converted == 1 and got == want) else 1


def _optimized_program(executable) -> bytes:
    """The compiled program as PJRT clients read it (PJRT_Executable_OptimizedProgram, which
    the wrapper answers in the caller's partition ids): an HloModuleProto."""
    import ctypes

    from shardy_convert.formats.protowire import fields

    plugin = executable._plugin
    program = plugin.args("PJRT_Program")
    args = plugin.args(
        "PJRT_Executable_OptimizedProgram_Args",
        executable=executable._executable(),
        program=ctypes.addressof(program),
    )
    plugin.call("PJRT_Executable_OptimizedProgram", args)  # asks for the size
    code = ctypes.create_string_buffer(max(int(program.code_size), 1))
    program.code = ctypes.cast(code, ctypes.c_void_p)
    plugin.call("PJRT_Executable_OptimizedProgram", args)
    data = code.raw[: int(program.code_size)]
    form = ctypes.string_at(program.format, program.format_size).decode()
    if form == "hlo_with_config":  # HloModuleProtoWithConfig: hlo_module = 1
        return next(value for number, _, value, _ in fields(data) if number == 1)
    return data


def _argument_shardings(text: str) -> list[str]:
    """The `mhlo.sharding` of each @main argument, in order."""
    import re

    signature = text[text.index("func.func @main(") : text.index(") ->")]
    return re.findall(r'mhlo\.sharding = "([^"]*)"', signature)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""Builds the PJRT plugin wrapper (a plain C shared library, not a Python extension module) into
the package.

The wrapper compiles against PJRT's C API header as an installed package ships it: the
`xla-cpu-pjrt` wheel has `xla_plugins/xla_cpu_pjrt/include/pjrt_c_api.h` (API 0.81), and
pyproject.toml's build requirements install it into the build environment where that wheel
exists (Linux x86-64). SHARDY_CONVERT_PJRT_INCLUDE (a folder holding pjrt_c_api.h) names another
copy. Without a header or without a working C compiler the build goes on without the wrapper:
everything else installs, the reason is printed, and `shardy_convert.plugin.wrapper.library_path()`
says the wrapper is unavailable."""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

WRAPPER = "shardy_convert.plugin._wrapper.libpjrt_shardy_wrapper"
SOURCE_DIR = Path("shardy_convert/plugin/_wrapper")
HEADER = "pjrt_c_api.h"
ENV_INCLUDE = "SHARDY_CONVERT_PJRT_INCLUDE"


def pjrt_include_dirs() -> list[Path]:
    """Where to look for pjrt_c_api.h, in order: the variable, the build environment's
    xla-cpu-pjrt, the target environment's (a build without isolation, or an isolated one
    into an environment that already has it)."""
    if os.environ.get(ENV_INCLUDE):
        return [Path(os.environ[ENV_INCLUDE])]
    dirs = []
    try:
        spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        dirs += [Path(p) / "include" for p in spec.submodule_search_locations]
    for key in ("purelib", "platlib"):
        dirs.append(Path(sysconfig.get_paths()[key]) / "xla_plugins" / "xla_cpu_pjrt" / "include")
    return dirs


def pjrt_include() -> Path | None:
    return next((d for d in pjrt_include_dirs() if (d / HEADER).is_file()), None)


class BuildWrapper(build_ext):
    def get_ext_filename(self, fullname: str) -> str:
        # A PJRT plugin is dlopened by path, not imported: a plain `lib….so` name.
        # (distutils asks with the last name component only, setuptools with the full name.)
        if fullname.split(".")[-1] == WRAPPER.split(".")[-1]:
            return str(Path(*fullname.split("."))) + ".so"
        return super().get_ext_filename(fullname)

    def get_export_symbols(self, ext: Extension) -> list[str]:
        return ext.export_symbols  # no PyInit_* (it is no Python module)

    def build_extension(self, ext: Extension) -> None:
        include = pjrt_include()
        if include is None:
            looked = ", ".join(str(d) for d in pjrt_include_dirs())
            print(
                f"warning: the PJRT plugin wrapper was not built: no {HEADER} (looked in "
                f"{looked}); install xla-cpu-pjrt, or set {ENV_INCLUDE} to a folder holding "
                "OpenXLA's pjrt_c_api.h, and reinstall",
                file=sys.stderr,
            )
            return
        # -isystem: the header's own pedantry is not this project's to fix.
        ext.extra_compile_args = [*ext.extra_compile_args, "-isystem", str(include)]
        try:
            super().build_extension(ext)
        except Exception as e:  # no compiler, a failed compile: install without the wrapper
            print(f"warning: the PJRT plugin wrapper was not built: {e}", file=sys.stderr)


setup(
    ext_modules=[
        Extension(
            WRAPPER,
            sources=[str(SOURCE_DIR / "pjrt_shardy_wrapper.c")],
            depends=[str(SOURCE_DIR / "pjrt_later.h")],
            include_dirs=[str(SOURCE_DIR)],
            extra_compile_args=["-O2", "-fvisibility=hidden", "-Wall", "-Wextra"],
            libraries=["dl", "pthread"],
        )
    ],
    cmdclass={"build_ext": BuildWrapper},
)

"""Builds the PJRT plugin wrapper (a plain C shared library, not a Python extension module) into
the package. Without a working C compiler the build goes on without it: everything else installs
and `shardy_convert.wrapper.library_path()` says why the wrapper is unavailable."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

WRAPPER = "shardy_convert.plugin._wrapper.libpjrt_shardy_wrapper"


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
        try:
            super().build_extension(ext)
        except Exception as e:  # no compiler, a failed compile: install without the wrapper
            print(f"warning: the PJRT plugin wrapper was not built: {e}", file=sys.stderr)


setup(
    ext_modules=[
        Extension(
            WRAPPER,
            sources=["shardy_convert/plugin/_wrapper/pjrt_shardy_wrapper.c"],
            extra_compile_args=["-O2", "-fvisibility=hidden", "-Wall"],
            libraries=["dl", "pthread"],
        )
    ],
    cmdclass={"build_ext": BuildWrapper},
)

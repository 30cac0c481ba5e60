"""What several test modules share: the test inputs they all use and the command line run
through click's runner."""

from __future__ import annotations

from click.testing import CliRunner, Result

from shardy_convert.cli.main import main

from .conftest import TESTDATA

MATMUL = TESTDATA / "torch_xla" / "matmul_2x4.mlir"  # 8 devices, V1 lists in custom orders
SHARDY = TESTDATA / "jax" / "shard_map_full.shardy.mlir"  # already Shardy
ESCAPE = TESTDATA / "torch_xla" / "manual_escape.dump"  # no Shardy form


def run(*args, input=None) -> Result:
    """`shardy-convert ARGS...` in process (paths may be given as Path)."""
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def said_same(stdout: str, where, shape: str) -> bool:
    """`check` printed `WHERE: same program[ up to float reassociation (...)]: SHAPE` (how the
    two partitioners order a reduction's partial sums is theirs to choose)."""
    import re

    verdict = r"same program(?: up to float reassociation \(max relative [^)]*\))?"
    return (
        re.search(rf"(?m)^{re.escape(str(where))}: {verdict}: {re.escape(shape)}", stdout)
        is not None
    )

"""bench/compare_base.py (`make bench BASE=<ref>`): how a figure of two trees is compared, and
the base ref checked out and removed. Timings themselves are never asserted."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import compare_base  # noqa: E402
from compare_base import Compared  # noqa: E402


@pytest.mark.parametrize(
    ("base", "head", "verdict"),
    [
        ((1.20, 1.21, 1.19), (1.20, 1.22, 1.20), "within noise"),
        ((1.20, 1.21, 1.19), (1.40, 1.41, 1.39), "WORSE"),
        ((1.40, 1.41, 1.39), (1.20, 1.21, 1.19), "BETTER"),
        ((1.0, 1.5, 1.2), (1.3, 1.3, 1.3), "within noise"),  # a noisy base hides 8 %
    ],
)
def test_a_change_counts_beyond_the_noise_of_either_side(base, head, verdict):
    compared = Compared("m", base, head)
    assert compared.verdict == verdict
    assert compared.ratio == pytest.approx(compared.head_value / compared.base_value)


def test_the_noise_is_the_larger_relative_spread():
    compared = Compared("m", (1.0, 1.1, 1.2), (2.0, 2.0, 2.0))
    assert compared.noise == pytest.approx(0.2 / 1.1)
    assert Compared("m", (1.0,), (1.0,)).noise == 0.0


def test_the_base_ref_is_checked_out_and_removed():
    with compare_base.worktree("HEAD") as tree:
        assert (tree / "shardy_convert" / "__init__.py").is_file()
    assert not tree.exists()


def test_a_ref_that_does_not_exist_is_an_error_naming_it():
    with (
        pytest.raises(compare_base.BaseRefError, match="no-such-ref"),
        compare_base.worktree("no-such-ref"),
    ):
        pass


def test_the_floor_context_is_jaxlibs_alone_with_every_dialect_loaded():
    """The floor is the same code for every tree compared (bench/floor.py), not the package's
    new_context, which loads dialects on first use."""
    from floor import floor_context

    from shardy_convert.ir.parse import new_context

    assert floor_context().is_registered_operation("llvm.return")
    assert not new_context().is_registered_operation("llvm.return")


def test_the_cold_start_figure_of_a_tree_and_a_failed_run_as_its_error(tmp_path):
    small = ROOT / "testdata" / "torch_xla" / "matmul_2x4.dump"
    with compare_base.worktree("HEAD") as tree:
        figure = compare_base.cold_start_figure(small, tree=tree, runs=1)
        failed = compare_base.cold_start_figure(tmp_path / "missing.dump", tree=tree, runs=1)
    assert isinstance(figure, float)
    assert math.isfinite(figure)
    assert figure > 0  # a ratio of two walls (no speed is asserted: a test is timed by nothing)
    assert isinstance(failed, str)
    assert "missing.dump" in failed

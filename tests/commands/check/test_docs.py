"""docs/check.md stays true to the code: every verdict `check` can give, and every key of the
evidence its JSON carries, is explained there."""

from __future__ import annotations

import pytest

from shardy_convert.commands.check import Verdict

from ...conftest import TESTDATA

PAGE = TESTDATA.parent / "docs" / "check.md"


@pytest.mark.parametrize("verdict", [v.value for v in Verdict])
def test_every_verdict_is_explained(verdict):
    assert f"| `{verdict}` |" in PAGE.read_text()


@pytest.mark.parametrize(
    "key",
    ["partitioners", "inputs", "rerun", "mismatches", "not_run", "fed_back_candidates",
     "fed_back_evidence", "--inputs FILE.npz", "--reproducer DIR"],
)  # fmt: skip
def test_every_piece_of_evidence_is_explained(key):
    assert f"`{key}`" in PAGE.read_text()

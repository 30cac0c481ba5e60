"""The docs' examples that need torch_xla, run as shown (`make test-e2e`, in .venv-torch): the
blocks a page marks `run with torch_xla`, in page order, in one working directory per page (a
program one block saves, the next runs; the dump it writes, the one after converts). The
marks and the matching of shown output are tests/docs_examples.py's; the other examples run
in tests/test_readme.py."""

from __future__ import annotations

import pytest

from tests.docs_examples import PAGES, ROOT, blocks, run_console, run_python, workdir

TORCH_PAGES = [page for page in PAGES if any(b.torch for b in blocks(page))]


def test_the_getting_started_page_is_run():
    assert ROOT / "docs" / "getting-started.md" in TORCH_PAGES


@pytest.mark.parametrize("page", TORCH_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_torch_xla_examples(page, tmp_path):
    cwd = workdir(tmp_path)
    for block in (b for b in blocks(page) if b.torch):
        if block.lang == "python":
            failure = run_python(block, cwd)
            assert not failure, failure
        else:
            failures = run_console(block, cwd, timeout=900)
            assert not failures, f"{block.name}:\n" + "\n\n".join(failures)

"""The generated parts of docs/ are what the code gives now (docs/make_reference.py: every
command's --help, the passes, the library's signatures, the make targets): a changed help
text, pass, signature or target fails here until `make docs` rewrites the page."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from .docs_examples import ROOT

_spec = importlib.util.spec_from_file_location("make_reference", ROOT / "docs/make_reference.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@pytest.mark.parametrize("name", reference.PAGES)
def test_the_generated_blocks_are_current(name):
    text = (ROOT / "docs" / name).read_text()
    assert reference.BLOCK.search(text), f"docs/{name} has no generated block"
    stale = reference.stale(text)
    assert not stale, f"docs/{name}: stale {stale}: run `make docs`"


def test_every_command_and_pass_has_its_section():
    from shardy_convert.cli.main import main
    from shardy_convert.passes.registry import PASSES

    cli = (ROOT / "docs/cli.md").read_text()
    commands = main.list_commands(click.Context(main))
    assert [f"shardy-convert {c}" for c in commands] == re.findall(
        r"^## `(shardy-convert \S+)`", cli, re.M
    )
    passes = (ROOT / "docs/passes.md").read_text()
    assert list(PASSES) == re.findall(r"^## `([a-z0-9-]+)`", passes, re.M)


def test_a_changed_help_text_is_stale(monkeypatch):
    from shardy_convert.cli.main import main

    page = (ROOT / "docs/cli.md").read_text()
    monkeypatch.setattr(main, "help", main.help + " Changed.")
    assert reference.stale(page) == ["cli"]


def test_a_block_is_rewritten_whole():
    page = (
        "intro\n<!-- BEGIN generated: make-targets -->\nstale text\n<!-- END generated -->\nafter\n"
    )
    rendered = reference.render(page)
    assert rendered.startswith("intro\n<!-- BEGIN generated: make-targets -->\n| target |")
    assert "stale text" not in rendered
    assert rendered.endswith("<!-- END generated -->\nafter\n")
    assert "| `make docs` |" in rendered
    assert reference.stale(rendered) == []


def test_an_unknown_key_is_an_error():
    with pytest.raises(KeyError, match="no generated block 'nope'"):
        reference.render("<!-- BEGIN generated: nope -->\n<!-- END generated -->")


def _make_docs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    """The mkdocs command `make docs` runs (read from `make -n docs`), on `config`."""
    planned = subprocess.run(
        ["make", "-n", "docs"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    line = next(x for x in planned.splitlines() if "mkdocs build" in x)
    args = shlex.split(line.split("mkdocs", 1)[1])
    at = args.index("--site-dir")
    args[at + 1] = str(site)  # not the tree's build/site
    args += ["-f", str(config)]
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args], capture_output=True, text=True, timeout=300
    )


def test_make_docs_fails_on_a_broken_link_and_builds_the_docs(tmp_path):
    pytest.importorskip("mkdocs")  # the `docs` extra (make install); not in every test venv
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    done = _make_docs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "getting-started" / "index.html").is_file()
    with (tmp_path / "docs" / "index.md").open("a") as f:
        f.write("\n[a page that is not there](no-such-page.md#nor-this)\n")
    done = _make_docs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr

"""The `>>>` examples in the sharding algebra's docstrings run and print what they show.

pytest's `--doctest-modules` is one switch for every module it collects (e2e/ and tests/ too,
whose modules are not meant to be imported as doctests), so the examples of
shardy_convert/sharding/ are found and run here with the standard library's doctest: one test
per docstring that has examples."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import shardy_convert.sharding as sharding


def _docstrings_with_examples() -> list[doctest.DocTest]:
    names = [sharding.__name__] + [
        m.name for m in pkgutil.walk_packages(sharding.__path__, f"{sharding.__name__}.")
    ]
    finder = doctest.DocTestFinder()
    found = []
    for name in names:
        found += [t for t in finder.find(importlib.import_module(name)) if t.examples]
    return sorted(found, key=lambda t: t.name)


DOCTESTS = _docstrings_with_examples()


def test_the_sharding_package_shows_examples():
    assert any(t.name == sharding.__name__ for t in DOCTESTS)  # the package's front page


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda t: t.name)
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert runner.tries == len(test.examples)

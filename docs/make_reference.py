"""Writes the reference parts of docs/ from the code, so that they cannot drift from it: the
command line from click (every command's `--help`), the passes from their classes (what
`list-passes` prints: name, docstring, options), the library's signatures and docstrings, and
the make targets from the Makefile.

    .venv/bin/python docs/make_reference.py          # rewrite them (`make docs` does)
    .venv/bin/python docs/make_reference.py --check  # exit 1 naming the stale blocks

Each generated block sits between `<!-- BEGIN generated: KEY -->` and `<!-- END generated -->`
in its page (as in docs/audit.md, whose blocks examples/make_audit_doc.py writes); the text
around them is written by hand. `tests/test_docs_reference.py` fails while a block is stale.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# The pages this script owns blocks in; every block of theirs has a KEY it knows.
PAGES = ("cli.md", "passes.md", "library.md", "development.md")
BLOCK = re.compile(r"(<!-- BEGIN generated: (\S+) -->\n)(.*?)(<!-- END generated -->)", re.S)
# `--help` as a terminal of this width shows it (click wraps to the terminal, at most 80
# columns by default): wide enough for the option table, narrow enough for a page.
HELP_WIDTH = 90
# The Shardy passes a jaxlib registers differ between releases: the block says which jaxlib
# it was made with, and is compared only under that one.
JAXLIB_LINE = re.compile(r"registered by jaxlib (\S+)")


def cli_reference() -> str:
    """Every command's `--help`, the group's first, each under a heading of its own."""
    from shardy_convert.cli.main import main

    width = {"terminal_width": HELP_WIDTH, "max_content_width": HELP_WIDTH}
    # make_context, as the command line does: the group's context settings (`-h`) apply.
    top = main.make_context("shardy-convert", [], resilient_parsing=True, **width)
    parts = [_help_section("shardy-convert", main.get_help(top))]
    for name in main.list_commands(top):
        command = main.get_command(top, name)
        ctx = command.make_context(name, [], parent=top, resilient_parsing=True)
        parts.append(_help_section(f"shardy-convert {name}", command.get_help(ctx)))
    return "\n".join(parts)


def _help_section(title: str, text: str) -> str:
    return f"## `{title}`\n\n```text\n{text.rstrip()}\n```\n"


def passes_reference() -> str:
    """The project's passes, as `list-passes` names them, each with its docstring and options
    (the dataclass fields a pipeline string can set), then the pipeline `convert` runs."""
    from shardy_convert.passes.pipeline import CONVERT_PIPELINE
    from shardy_convert.passes.pipeline_text import SYNTAX, option_kinds
    from shardy_convert.passes.registry import PASSES

    parts = []
    for name, cls in PASSES.items():
        module = Path(inspect.getfile(cls)).relative_to(ROOT).as_posix()
        parts.append(f"## `{name}`\n\n{_markdown(cls.__doc__ or '')}\n")
        parts.append(f"`{cls.__name__}` in `{module}`.\n")
        kinds = {f: k for f, k in option_kinds(cls).items() if k != "python"}
        if kinds:
            parts.append(_options_table(cls, kinds, SYNTAX))
    pipeline = ",".join(CONVERT_PIPELINE)
    parts.append(f"## The convert pipeline\n\n`convert` runs `{pipeline}`.\n")
    return "\n".join(parts)


def _options_table(cls: type, kinds: dict, syntax: dict) -> str:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    rows = ["| option | takes | default |", "|---|---|---|"]
    for name, kind in kinds.items():
        default = fields[name].default
        shown = "none" if default is None else repr(default).lower()
        rows.append(f"| `{name.replace('_', '-')}` | `{syntax[kind]}` | `{shown}` |")
    return "\n".join(rows) + "\n"


def shardy_passes() -> str:
    """The Shardy passes the installed jaxlib registers, as `list-passes` shows them."""
    import jaxlib

    from shardy_convert.passes.pipeline_text import registered_shardy_passes

    names = [
        name if anchor == "builtin.module" else f"{anchor}({name})"
        for name, anchor in registered_shardy_passes().items()
    ]
    listed = "\n".join(f"- `{n}`" for n in names)
    return f"{len(names)} passes, registered by jaxlib {jaxlib.__version__}:\n\n{listed}\n"


def api_reference(dotted: str) -> str:
    """One public function or class: where to import it from, its signature as the code
    declares it, its docstring; a class also its public methods and properties."""
    module_name, _, attr = dotted.rpartition(".")
    obj = getattr(importlib.import_module(module_name), attr)
    if inspect.isclass(obj):
        return _class_reference(dotted, obj)
    head = f"### `{dotted}`\n\n```python\n{_signature(attr, obj)}\n```\n"
    return f"{head}\n{_markdown(obj.__doc__ or '')}\n"


def _class_reference(dotted: str, cls: type) -> str:
    kind = "exception" if issubclass(cls, BaseException) else "class"
    init = cls if dataclasses.is_dataclass(cls) else cls.__init__
    head = _signature(f"{kind} {cls.__name__}", init, skip_self=init is not cls, returns=False)
    if issubclass(cls, BaseException) and "__init__" not in vars(cls):
        head = f"{kind} {cls.__name__}({', '.join(b.__name__ for b in cls.__bases__)})"
    parts = [f"### `{dotted}`\n\n```python\n{head}\n```\n\n{_markdown(cls.__doc__ or '')}\n"]
    for name, member in vars(cls).items():
        if (name.startswith("_") and name != "__call__") or not getattr(member, "__doc__", None):
            continue
        title = f"{cls.__name__}.{name}"
        if isinstance(member, property):
            parts.append(f"#### `{title}` (property)\n\n{_markdown(member.__doc__)}\n")
        elif inspect.isfunction(member):
            sig = _signature(title, member, skip_self=True)
            parts.append(f"#### `{title}`\n\n```python\n{sig}\n```\n")
            parts.append(f"{_markdown(member.__doc__)}\n")
    return "\n".join(parts)


def _signature(name: str, obj, *, skip_self: bool = False, returns: bool = True) -> str:
    """`name(...)` as the source spells it (annotations are strings under `from __future__
    import annotations`), one parameter a line when it does not fit on one."""
    signature = inspect.signature(obj)
    params, star_done = [], False
    for k, p in enumerate(signature.parameters.values()):
        if skip_self and k == 0:
            continue
        if p.kind is p.KEYWORD_ONLY and not star_done:
            params.append("*")
            star_done = True
        star_done |= p.kind is p.VAR_POSITIONAL
        params.append(_parameter(p))
    declared = signature.return_annotation
    shown = returns and declared is not inspect.Signature.empty
    tail = f" -> {_annotation(declared)}" if shown else ""
    one_line = f"{name}({', '.join(params)}){tail}"
    if len(one_line) <= 88:
        return one_line
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){tail}"


def _parameter(p: inspect.Parameter) -> str:
    prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
    text = prefix + p.name
    if p.annotation is not inspect.Parameter.empty:
        text += f": {_annotation(p.annotation)}"
        if p.default is not inspect.Parameter.empty:
            return f"{text} = {p.default!r}"
    elif p.default is not inspect.Parameter.empty:
        return f"{text}={p.default!r}"
    return text


def _annotation(annotation) -> str:
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


PARAMETER = re.compile(r"^(\w+(?:, \w+)*):(?: |$)")


def _markdown(doc: str) -> str:
    """A docstring as Markdown: `name: text` paragraphs (parameters, continued on indented
    lines) become a list, indented blocks stay code, other paragraphs stay as written."""
    out = []
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(doc)):
        lines = paragraph.splitlines()
        if all(line.startswith("    ") for line in lines):
            out.append("```text\n" + "\n".join(line[4:] for line in lines) + "\n```")
        elif PARAMETER.match(lines[0]):
            out.append("\n".join(_items(lines)))
        else:
            out.append("\n".join(lines))
    return "\n\n".join(out)


def _items(lines: list[str]) -> list[str]:
    items: list[str] = []
    for line in lines:
        m = PARAMETER.match(line)
        if m:
            names = ", ".join(f"`{n}`" for n in m.group(1).split(", "))
            items.append(f"- {names}: {line[m.end() :]}".rstrip())
        elif items:
            items[-1] += " " + line.strip()
        else:
            items.append(line)
    return items


def make_targets() -> str:
    """`make help` as a table: every target with a `## ` description in the Makefile."""
    rows = ["| target | what it does |", "|---|---|"]
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+):.*## (.*)$", line)
        if m:
            about = m.group(2).replace("|", "\\|")
            rows.append(f"| `make {m.group(1)}` | {about} |")
    return "\n".join(rows) + "\n"


def block(key: str) -> str:
    """The text of the generated block KEY."""
    if key.startswith("api:"):
        return api_reference(key[4:])
    makers = {
        "cli": cli_reference,
        "passes": passes_reference,
        "shardy-passes": shardy_passes,
        "make-targets": make_targets,
    }
    if key not in makers:
        raise KeyError(f"no generated block {key!r}")
    return makers[key]()


def render(text: str) -> str:
    """`text` with every generated block rewritten."""
    return BLOCK.sub(lambda m: m.group(1) + block(m.group(2)) + m.group(4), text)


def stale(text: str) -> list[str]:
    """The keys of the blocks of `text` that differ from what the code gives now. The Shardy
    pass list is compared only under the jaxlib that wrote it."""
    import jaxlib

    found = []
    for m in BLOCK.finditer(text):
        key, shown = m.group(2), m.group(3)
        written = JAXLIB_LINE.search(shown)
        if key == "shardy-passes" and written and written.group(1) != jaxlib.__version__:
            continue
        if shown != block(key):
            found.append(key)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a block is stale")
    args = parser.parse_args()
    problems = []
    for name in PAGES:
        page = DOCS / name
        text = page.read_text()
        if args.check:
            problems += [f"{page.relative_to(ROOT)}: {key}" for key in stale(text)]
        elif render(text) != text:
            page.write_text(render(text))
            print(f"wrote {page.relative_to(ROOT)}")
    if problems:
        sys.exit("stale, run `make docs`: " + ", ".join(problems))


if __name__ == "__main__":
    main()

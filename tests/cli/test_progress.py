"""A batch's progress bar on a real terminal (a pseudo-terminal) and the messages printed while
it shows: each message on a line of its own, never run on from the bar (issue 19:
`converting [####] 79% 00:00:09…/manual_escape.dump:graph 0:24:5: ...`)."""

from __future__ import annotations

import re

from tests.helpers import ESCAPE, MATMUL, on_a_terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _visible_lines(received: str) -> list[str]:
    """What a terminal shows: per line, the text after the last carriage return (each redraw
    starts with one, then clears the line), escape sequences removed."""
    lines = received.replace("\r\n", "\n").split("\n")
    return [ANSI.sub("", line.rsplit("\r", 1)[-1]) for line in lines]


def test_errors_take_lines_of_their_own_above_the_bar(tmp_path):
    escape_text = tmp_path / "escape.dump"
    escape_text.write_bytes(ESCAPE.read_bytes())
    inputs = [MATMUL, ESCAPE, MATMUL.with_name("fsdp.dump"), escape_text]
    code, terminal, _ = on_a_terminal(["convert", *inputs, "-o", f"{tmp_path}/out/"], "stderr")
    received = terminal.decode(errors="replace")
    assert code == 1, received
    assert re.search(r"converting +\[", received)  # the bar did show
    lines = _visible_lines(received)
    errors = [line for line in lines if ": error: " in line]
    assert len(errors) == 2, lines
    for line in errors:
        assert line.startswith((str(ESCAPE), str(escape_text))), line
    assert "2 of 4 inputs converted" in lines
    assert lines[lines.index("2 of 4 inputs converted") - 1].startswith("converting")

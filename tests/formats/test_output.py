"""The one atomic writer (`formats.output.write_atomic`): whole files, the old mode kept, a
read-only file left alone, no temporary file left behind by an interrupted write."""

from __future__ import annotations

import os
import stat

import pytest

from shardy_convert.formats import output


def test_a_new_file_is_written_whole(tmp_path):
    path = tmp_path / "out.mlir"
    output.write_atomic(path, b"module {}\n")
    assert path.read_bytes() == b"module {}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "out.mlir"
    path.write_bytes(b"old")
    path.chmod(0o640)
    output.write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_read_only_file_is_not_replaced(tmp_path, monkeypatch):
    path = tmp_path / "out.mlir"
    path.write_bytes(b"old")
    path.chmod(0o444)
    if os.geteuid() == 0:  # root may write any file: the access check answers as for a user
        access = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode: False if str(p) == str(path) else access(p, mode)
        )
    with pytest.raises(PermissionError):
        output.write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "out.mlir"
    path.write_bytes(b"old")
    seen = []

    def interrupted(src, dst):
        seen.append(set(output._PARTIAL))  # tracked for a Ctrl-C that ends the process
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.write_atomic(path, b"new")
    (tmp,) = seen[0]
    assert tmp.parent == tmp_path
    assert not output._PARTIAL
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


def test_remove_partial_outputs_removes_the_tracked_temporary_files(tmp_path, monkeypatch):
    tmp = tmp_path / ".out.mlir.1234.tmp"
    tmp.write_bytes(b"half")
    monkeypatch.setattr(output, "_PARTIAL", {tmp})
    output.remove_partial_outputs()
    assert not tmp.exists()


@pytest.mark.parametrize("limit", [0, 5, 1 << 20])
def test_a_spool_gives_back_what_was_written_in_memory_or_on_disk(limit):
    """stdout's results wait in a spool: in memory up to its limit, then in a temporary file
    (tempfile imported only then); either way the bytes come back as written."""
    pieces = [b"module {\n", b"", b"x" * 7, "\u00e9".encode(), b"}\n"]
    with output._Spool(limit) as spool:
        for piece in pieces:
            spool.write(piece)
        assert spool._on_disk is (limit < sum(map(len, pieces)))
        spool.seek(0)
        assert spool.read() == b"".join(pieces)
        spool.seek(0)
        assert spool.read(3) + spool.read() == b"".join(pieces)

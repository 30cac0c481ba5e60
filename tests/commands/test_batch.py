"""Batches and safe writes (`shardy_convert.commands.batch`) and the command line's edges: what is
written where, what is refused before anything is written, and the exit code of each."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from shardy_convert import ShardyConvertError, convert
from shardy_convert.commands import batch
from shardy_convert.formats import module as formats
from tests.conftest import TESTDATA
from tests.helpers import MATMUL, SHARDY, run

DUMP = TESTDATA / "torch_xla" / "matmul_2x4.dump"
BATCH = ("convert", "v2", "to-gspmd")


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# --- safe writes ------------------------------------------------------------------------------


def test_new_output_follows_the_umask(tmp_path, umask_022):
    out = tmp_path / "new.mlir"
    assert run("convert", MATMUL, "-o", out).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_existing_output_keeps_its_mode(tmp_path, umask_022):
    out = tmp_path / "old.mlir"
    out.write_text("old")
    out.chmod(0o640)
    assert run("convert", MATMUL, "-o", out).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert "sdy.mesh" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.mlir"]  # no temporary left


def test_symlink_output_writes_through_to_its_target(tmp_path):
    target = tmp_path / "real.mlir"
    target.write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    assert run("convert", MATMUL, "-o", link).exit_code == 0
    assert link.is_symlink()
    assert "sdy.mesh" in target.read_text()


def test_fifo_output_is_written_in_place_not_renamed_over(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = run("convert", MATMUL, "-o", fifo)
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert b"sdy.mesh" in received[0]


def test_terminal_output_is_written_in_place(tmp_path):
    """A character device (a pseudo-terminal here, never /dev/null) is written, not renamed
    over: `-o /dev/null` once turned /dev/null into a regular file."""
    import pty

    leader, follower = pty.openpty()
    name = os.ttyname(follower)
    try:
        result = run("convert", MATMUL, "-o", name)
        assert result.exit_code == 0, result.output
        assert stat.S_ISCHR(os.stat(name).st_mode)
        os.set_blocking(leader, False)
        assert b"sdy.mesh" in os.read(leader, 1 << 16)
    finally:
        os.close(follower)
        os.close(leader)


def test_read_only_output_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    """Renaming over a read-only file would succeed in a writable directory; it is refused
    like any unwritable file (`os.access` stands in for a user who is not root)."""
    out = tmp_path / "ro.mlir"
    out.write_text("old")
    out.chmod(0o444)
    access = os.access
    writable = {os.W_OK, os.W_OK | os.F_OK}
    monkeypatch.setattr(
        batch.os,
        "access",
        lambda path, mode: not (Path(path) == out and mode in writable) and access(path, mode),
    )
    result = run("convert", MATMUL, "-o", out)
    assert result.exit_code == 1
    assert f"{out}: error: cannot write: Permission denied" in result.stderr
    assert out.read_text() == "old"
    assert stat.S_IMODE(out.stat().st_mode) == 0o444


@pytest.mark.parametrize("command", ["convert", "v2", "to-gspmd"])
def test_dash_output_is_stdout(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    result = run(command, MATMUL, "-o", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("module")
    assert list(tmp_path.iterdir()) == []  # no file named "-"


def test_output_ending_in_a_slash_is_a_directory(tmp_path):
    """`-o out/` (a directory that does not exist yet) once wrote a file named `out`."""
    result = run("convert", MATMUL, "-o", f"{tmp_path / 'out'}{os.sep}")
    assert result.exit_code == 0, result.output
    assert "sdy.mesh" in (tmp_path / "out" / MATMUL.name).read_text()


def test_output_that_is_an_input_is_refused(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_bytes(MATMUL.read_bytes())
    result = run("convert", path, "-o", path)
    assert result.exit_code == 2
    assert "inputs are never written" in result.stderr
    assert path.read_bytes() == MATMUL.read_bytes()


def test_output_that_is_an_input_through_a_directory_is_refused(tmp_path):
    (tmp_path / "m.mlir").write_bytes(MATMUL.read_bytes())
    result = run("convert", tmp_path, "-o", tmp_path)
    assert result.exit_code == 2
    assert (tmp_path / "m.mlir").read_bytes() == MATMUL.read_bytes()


def test_two_inputs_for_one_output_are_refused_before_anything_is_written(tmp_path):
    for side in "ab":
        (tmp_path / side).mkdir()
        (tmp_path / side / "m.mlir").write_bytes(MATMUL.read_bytes())
    out = tmp_path / "out"
    result = run("convert", tmp_path / "a" / "m.mlir", tmp_path / "b" / "m.mlir", "-o", out)
    assert result.exit_code == 2
    assert "would both be written to" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("args", [(MATMUL, DUMP), (TESTDATA / "jax",)], ids=["files", "dir"])
def test_several_inputs_without_an_output_are_a_usage_error(args):
    result = run("convert", *args)
    assert result.exit_code == 2
    assert "need -o DIR" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("args", [(MATMUL, DUMP), (TESTDATA / "jax",)], ids=["files", "dir"])
def test_several_inputs_to_an_existing_file_are_a_usage_error(tmp_path, args):
    out = tmp_path / "out.mlir"
    out.write_text("kept")
    result = run("convert", *args, "-o", out)
    assert result.exit_code == 2, result.output
    assert f"{out} is a file: several inputs (or a directory) need -o DIR" in result.stderr
    assert out.read_text() == "kept"


@pytest.mark.parametrize("command", ["convert", "v2", "to-gspmd", "inspect", "check"])
def test_a_directory_with_no_inputs_is_a_usage_error(tmp_path, command):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("not a module")
    result = run(command, empty, *(["-o", tmp_path / "out"] if command in BATCH else []))
    assert result.exit_code == 2, result.output
    assert f"{empty}: no input files in this directory" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args", [["inspect", "-", "-"], ["check", "-", "-"], ["diff", "-", "-"]], ids=lambda a: a[0]
)
def test_stdin_given_twice_is_a_usage_error_for_every_command(args):
    result = run(*args, input=MATMUL.read_text())
    assert result.exit_code == 2, result.output
    assert "stdin (-) is given more than once" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["diff", "{d}", "{m}"],
        ["diff", "{m}", "{d}"],
        ["diff", "--normalize", "{d}"],
        ["opt", "{d}", "-p", "v1-to-v2"],
    ],
    ids=["diff-a", "diff-b", "normalize", "opt"],
)
def test_a_directory_where_one_file_is_read_is_a_usage_error(tmp_path, args):
    result = run(*[a.format(d=tmp_path, m=MATMUL) for a in args])
    assert result.exit_code == 2, result.output
    assert "is a directory" in result.stderr


def test_full_disk_is_reported_with_the_path(tmp_path, monkeypatch):
    out = tmp_path / "out.mlir"
    out.write_text("old")

    class Full:
        def __init__(self, fd, mode):
            self.fd = fd

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

        def close(self):
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def fileno(self):
            return self.fd

    monkeypatch.setattr(batch.os, "fdopen", Full)
    with pytest.raises(ShardyConvertError, match=f"^{out}: cannot write: No space left"):
        batch.write("module {}", out)
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.mlir"]


def test_full_stdout_is_reported_as_such():
    class Full:
        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(ShardyConvertError, match=r"^<stdout>: cannot write: No space"):
        batch.write("module {}", None, stdout=Full())


# --- the edges ----------------------------------------------------------------------------------


@pytest.mark.parametrize("emit", ["bytecode", "portable"])
def test_a_dump_cannot_be_emitted_as_bytecode(tmp_path, emit):
    """An option this input refuses: a usage error (exit 2), before anything is written."""
    out = tmp_path / "out"
    result = run("convert", MATMUL, DUMP, "--emit", emit, "-o", f"{out}/")
    assert result.exit_code == 2
    assert f"{DUMP}: a torch_xla dump is text: it cannot be written as {emit}" in result.stderr
    assert not out.exists()


def test_a_dump_on_stdin_cannot_be_emitted_as_bytecode(tmp_path):
    out = tmp_path / "out.mlirbc"
    result = run("convert", "-", "--emit", "bytecode", "-o", out, input=DUMP.read_text())
    assert result.exit_code == 2
    assert "-: error: a torch_xla dump is text: it cannot be written as bytecode" in (result.stderr)
    assert not out.exists()


def test_stdin_is_read_once():
    result = run("convert", "-", "-", input=MATMUL.read_text())
    assert result.exit_code == 2
    assert "stdin (-) is given more than once" in result.stderr


@pytest.mark.parametrize("text", ["", "  \n"], ids=["empty", "blank"])
def test_empty_input_is_an_error(tmp_path, text):
    path = tmp_path / "empty.mlir"
    path.write_text(text)
    result = run("convert", path)
    assert result.exit_code == 1
    assert f"{path}: error: the input is empty" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("version", ["9.9.9", "99.0.0", "1.2", "x"])
def test_bad_target_version_is_a_usage_error(version):
    result = run("convert", MATMUL, "--emit", "portable", "--target-version", version)
    assert result.exit_code == 2
    assert f'target version "{version}" is not a StableHLO version from' in result.stderr
    assert result.stdout_bytes == b""


def test_target_version_without_a_portable_output_is_warned_about():
    result = run("convert", MATMUL, "--target-version", "1.0.0")
    assert result.exit_code == 0
    assert "warning: target_version ignored: the output is not a portable artifact" in (
        result.stderr
    )


def test_target_version_without_a_portable_output_is_warned_about_once():
    result = run("convert", MATMUL, "--target-version", "1.0.0")
    assert result.exit_code == 0
    assert result.stderr.count("warning") == 1, result.stderr


@pytest.mark.parametrize("source", [MATMUL, SHARDY], ids=["gspmd", "already-shardy"])
def test_target_version_applies_to_a_portable_input_kept_portable(tmp_path, source):
    """A portable artifact stays one; --target-version without --emit then applies, also to
    an input that is already Shardy (which is otherwise returned as it came)."""
    newest = tmp_path / "newest.portable"
    assert run("convert", source, "--emit", "portable", "-o", newest).exit_code == 0
    out = tmp_path / "old.portable"
    result = run("convert", newest, "--target-version", "1.0.0", "-o", out)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert formats.portable_version(out.read_bytes()) == "1.0.0"


def test_mesh_on_already_shardy_input_is_warned_about():
    result = run("convert", SHARDY, "--mesh", "a=8")
    assert result.exit_code == 0, result.output
    assert "warning: mesh ignored: the module already carries Shardy" in result.stderr
    assert result.stdout == SHARDY.read_text()


@pytest.mark.parametrize(
    ("option", "name"),
    [(["--num-devices", "8"], "num_devices"), (["--imported"], "imported")],
    ids=["num-devices", "imported"],
)
def test_other_options_on_already_shardy_input_are_warned_about(option, name):
    result = run("convert", SHARDY, *option)
    assert result.exit_code == 0, result.output
    assert f"warning: {name} ignored: the module already carries Shardy" in result.stderr
    assert result.stdout == SHARDY.read_text()


def test_num_devices_must_agree_with_num_partitions(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(
        "module attributes {mhlo.num_partitions = 16 : i32} {\n"
        '  func.func @main(%arg0: tensor<16xf32> {mhlo.sharding = "{replicated}"}) '
        "-> tensor<16xf32> {\n    return %arg0 : tensor<16xf32>\n  }\n}\n"
    )
    result = run("convert", path, "--num-devices", "8")
    assert result.exit_code == 1
    assert "num_devices is 8 but the module says mhlo.num_partitions = 16" in result.stderr
    assert result.stdout == ""


def test_malformed_mesh_is_a_usage_error_quoting_what_was_typed():
    result = run("convert", MATMUL, "--mesh", "data")
    assert result.exit_code == 2
    assert 'got "data"' in result.stderr
    assert "data=" not in result.stderr


# --- the library's boundary --------------------------------------------------------------------


@pytest.mark.parametrize("bad", [123, MATMUL, None], ids=["int", "path", "none"])
def test_library_rejects_what_is_not_a_module_with_type_error(bad):
    with pytest.raises(TypeError, match="a module must be str or bytes"):
        convert(bad)


def test_library_gives_bytes_for_bytes():
    out = convert(MATMUL.read_bytes())
    assert isinstance(out, bytes)
    assert out.decode() == convert(MATMUL.read_text())

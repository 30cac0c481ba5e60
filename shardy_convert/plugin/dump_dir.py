"""What the plugin compiled, written where the user asks: `use_plugin(dump_dir=DIR)`, or the
environment variable SHARDY_CONVERT_DUMP_DIR=DIR for programs that cannot change their call.

    DIR/index.tsv        one line per distinct program (a header line first; see COLUMNS)
    DIR/NAME.mlirbc      the program exactly as the plugin received it (a StableHLO portable
                         artifact, Shardy in its round-trip form; MLIR bytecode with
                         emit="bytecode"; absent with emit="text")
    DIR/NAME.mlir        its text, Shardy in the sdy dialect (`sdy.mesh @mesh = <["data"=2,
                         "model"=4]>`), after `//` lines saying what it is
    DIR/NAME.input.mlirbc  for a program that failed to convert (on_error="raise"), what
                         torch_xla handed the wrapper (reproduce with `shardy-convert convert`)
    DIR/meshes.json      the meshes the program created (formats/meshes.py)

NAME is torch_xla's graph hash, the `Graph Hash:` line of its XLA_SAVE_TENSORS_FILE dump, when
the program runs with that dump on: torch_xla writes the line just before it compiles the graph
(`SyncTensorsGraphInternal`, torch_xla 2.9), on the same thread, so the last line of the dump
at compile time names the program being compiled. Without that dump the hash is not reachable
from the compile (torch_xla hands a plugin only the program and its options), and NAME is
`c` + a content hash of the program as torch_xla handed it (blake2b, 128 bits); the index's
`module` column (`SyncTensorsGraph.22`) and the program text still tell them apart. Every file
is written atomically (a temporary file renamed over it): a run stopped by Ctrl-C leaves no
half-written file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import struct
import threading
from dataclasses import dataclass, fields
from pathlib import Path

from ..errors import ShardyConvertError
from ..formats.meshes import IN_DIR
from ..formats.output import write_atomic
from .program import ProgramReport
from .torch_xla.mesh_recorder import RECORDER

log = logging.getLogger("shardy_convert.wrapper")

INDEX = "index.tsv"
# Compiles torch_xla's runtime makes on its own, with no graph hash line before them.
_RUNTIME_PROGRAMS = ("ReplicateShardedData", "ReshardData", "IrToHlo")
_GRAPH_HASH = re.compile(rb"^Graph Hash: ([0-9a-f]+)\s*$", re.M)


@dataclass
class Record:
    """One line of index.tsv. `mesh_from`: user (a mesh the program created), inferred (from
    the shardings: no mesh was recorded, none fit, or mesh_names=False), shardy (the program
    was Shardy already), gspmd (passed through unconverted), failed (not compiled)."""

    name: str
    graph_hash: str  # torch_xla's Graph Hash, or "-"
    module: str  # the module's name (SyncTensorsGraph.22), or "-"
    devices: int | str  # partitions the program is compiled for, or "-"
    mesh: str  # the Shardy mesh `<["data"=2, "model"=4]>`, or "-"
    device_ids: str  # the mesh's device order in torch_xla's ids (0,2,1,3), "-" for 0,1,2,...
    mesh_from: str
    note: str  # why the mesh was inferred, or the error; "-"
    mlirbc: str  # file names in DIR, "-" when not written
    mlir: str


COLUMNS = tuple(f.name for f in fields(Record))


class DumpDir:
    """Writes the programs of one process into a directory, once per name (thread-safe)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path).expanduser().resolve()
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._lines = _read_index(self.path / INDEX)
        self._names = {line.split("\t", 1)[0] for line in self._lines}

    def name_for(self, code: bytes, module: str | None) -> tuple[str, str]:
        """(NAME, graph hash or "-") for a program as torch_xla handed it over."""
        graph_hash = torch_xla_graph_hash(module)
        if graph_hash is not None:
            return graph_hash, graph_hash
        return "c" + hashlib.blake2b(code, digest_size=16).hexdigest(), "-"

    def has(self, name: str) -> bool:
        with self._lock:
            return name in self._names

    def write(self, record: Record, binary: bytes | None, text: str | None) -> None:
        """Writes the program's files and its index line (the files first: an index line
        never names a file that is not there)."""
        with self._lock:
            if record.name in self._names:
                return
            self._names.add(record.name)
        if binary is not None:
            write_atomic(self.path / record.mlirbc, binary)
        if text is not None:
            write_atomic(self.path / record.mlir, text.encode())
        line = "\t".join(_cell(getattr(record, c)) for c in COLUMNS)
        with self._lock:
            self._lines.append(line)
            data = "\t".join(COLUMNS) + "\n" + "".join(f"{x}\n" for x in self._lines)
            write_atomic(self.path / INDEX, data.encode())

    def program(
        self,
        code: bytes,
        form: bytes,
        sent: tuple | None,
        report: ProgramReport | None,
        error: ShardyConvertError | None = None,
    ) -> None:
        """Writes what one compile handed the plugin (`sent`: the wrapper's (program, format,
        options, order), None when it refused the compile; `report`: what the conversion found,
        None where a bug of ours stopped it first; `error`: why it was not converted) unless
        a program of the same name was written; never raises: a dump that cannot be written is
        logged and the run goes on."""
        try:
            self._program(code, form, sent, report or ProgramReport(), error)
        except Exception as e:  # a full disk must not stop the user's program
            log.warning("shardy-convert: cannot dump a program into %s: %s", self.path, e)

    def _program(
        self,
        code: bytes,
        form: bytes,
        sent,
        report: ProgramReport,
        error: ShardyConvertError | None,
    ) -> None:
        name, graph_hash = self.name_for(code, report.module)
        if self.has(name):
            return
        mesh_from, note = _source(report, sent, error)
        record = Record(
            name=name,
            graph_hash=graph_hash,
            module=report.module or "-",
            devices=report.devices or "-",
            mesh=report.mesh or "-",
            device_ids=_order(sent[3]) if sent else "-",
            mesh_from=mesh_from,
            note=note,
            mlirbc="-",
            mlir="-",
        )
        binary = text = None
        if sent is None:  # not compiled: what torch_xla handed over, to reproduce the error
            record.mlirbc = f"{name}.input.{'hlo.pb' if form == b'hlo' else 'mlirbc'}"
            binary = code
        elif sent[1] == b"hlo":
            record.mlirbc, binary = f"{name}.hlo.pb", sent[0]
        else:
            text = _text(sent[0], record)
            record.mlir = f"{name}.mlir"
            if not _is_text(sent[0]):
                record.mlirbc, binary = f"{name}.mlirbc", sent[0]
        self.write(record, binary, text)


def _source(report: ProgramReport, sent, error: ShardyConvertError | None) -> tuple[str, str]:
    """(mesh_from, note) of an index line."""
    if error is not None:  # passed through unconverted, or refused
        return ("gspmd" if sent is not None else "failed"), (
            str(error) if error.location else error.message
        )
    if report.shardy:
        return "shardy", "-"
    if report.choice is None:
        return "inferred", "the program created no mesh (or mesh_names=False)"
    if report.choice.mesh is None:
        return "inferred", report.choice.why or "-"
    return "user", report.choice.mesh


def _order(order: bytes) -> str:
    """The device order sent back with a program, "-" for none or the identity (the wrapper
    sends the caller's own order back too: it relabels the compiled shardings with it)."""
    ids = struct.unpack(f"<{len(order) // 4}i", order) if order else ()
    return "-" if list(ids) == list(range(len(ids))) else ",".join(map(str, ids))


def _is_text(data: bytes) -> bool:
    from ..formats import module as formats

    return formats.detect(data) == "text"


def _text(code: bytes, record: Record) -> str:
    """The program as MLIR text, Shardy in the sdy dialect, after lines saying what it is."""
    from ..converter import import_round_trip
    from ..formats import module as formats
    from ..ir.parse import new_context

    if _is_text(code):
        body = code.decode()
    else:
        with new_context() as ctx:
            mod = formats.load(code, ctx, trusted=True)
            import_round_trip(mod)
            body = formats.save(mod, "text")
    order = record.device_ids
    lines = [
        f"// shardy-convert: the program the PJRT plugin compiled (dump {record.name})",
        f"// module {record.module}, graph hash {record.graph_hash}, {record.devices} devices",
        f"// mesh {record.mesh} ({record.mesh_from}: {record.note})",
    ]
    if order != "-":
        lines.append(f"// compiled with the mesh's device order as its device assignment: {order}")
    return "\n".join(lines) + "\n" + body


def _cell(value) -> str:
    text = str(value)
    return re.sub(r"[\t\r\n]+", " ", text) if text else "-"


def _read_index(path: Path) -> list[str]:
    """The lines of an index left by an earlier run into the same directory (kept)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    if not lines or lines[0].split("\t") != list(COLUMNS):
        return []
    return [line for line in lines[1:] if line.strip()]


def torch_xla_graph_hash(module: str | None) -> str | None:
    """The graph hash torch_xla wrote last into its XLA_SAVE_TENSORS_FILE dump (`PATH.N`, N
    the device ordinal), when the program being compiled is one of its graphs; else None."""
    base = os.environ.get("XLA_SAVE_TENSORS_FILE")
    if not base or (module or "").startswith(_RUNTIME_PROGRAMS):
        return None
    folder, prefix = os.path.split(os.path.abspath(base))
    try:
        names = [n for n in os.listdir(folder or ".") if n == prefix or n.startswith(prefix + ".")]
        paths = [os.path.join(folder, n) for n in names if not n.endswith(".meshes.json")]
        newest = max(paths, key=os.path.getmtime, default=None)
        if newest is None:
            return None
        with open(newest, "rb") as f:
            f.seek(max(0, os.path.getsize(newest) - 4096))
            tail = f.read()
    except OSError:
        return None
    found = _GRAPH_HASH.findall(tail)
    return found[-1].decode() if found else None


_dirs: dict[Path, DumpDir] = {}
_dirs_lock = threading.Lock()


def open_dir(path: str | os.PathLike) -> DumpDir:
    """The process's writer for one directory (one per directory, shared by sessions)."""
    key = Path(path).expanduser().resolve()
    with _dirs_lock:
        if key not in _dirs:
            _dirs[key] = DumpDir(key)
        return _dirs[key]


def dump_for(path: str | os.PathLike | None) -> DumpDir | None:
    """The writer for `path` (None: no dump; `Settings.dump_dir`, whose default is
    $SHARDY_CONVERT_DUMP_DIR); it also keeps DIR/meshes.json up to date with the meshes the
    program creates."""
    if not path:
        return None
    try:
        dump = open_dir(path)
        RECORDER.write_to(dump.path / IN_DIR)
    except OSError as e:
        raise ShardyConvertError(f"cannot write the dump directory {path}: {e.strerror}") from None
    return dump

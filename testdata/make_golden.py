"""Regenerates testdata/golden/: the converted form of every input under testdata/.

Run by `make golden`. Each input `X` (a torch_xla dump, a torch_xla module, or a JAX GSPMD
lowering listed in manifest.json) gets `golden/X` with the Shardy module(s) the current
converter writes, so a change in the converter shows up as a reviewable diff.
Inputs whose manifest entry expects an error get `golden/X.err` with the error message. Inputs
with a recorded mesh file (`X.meshes.json`, manifest "mesh_file") are converted on those meshes,
as `shardy-convert convert X` does: their goldens carry the program's axis names.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from shardy_convert.commands.batch import Job
from shardy_convert.converter import ConvertRequest
from shardy_convert.formats import meshes
from shardy_convert.passes.import_shardings import ImportShardingsPass

SOURCES = ("torch_xla_dump", "torch_xla_mlir", "jax_gspmd")


def golden_path(entry: dict) -> Path:
    suffix = "" if entry["expect"] == "ok" else ".err"
    return HERE / "golden" / (entry["path"] + suffix)


def render(entry: dict) -> str:
    """The converted text, or the error messages, of one manifest entry; on the meshes the
    program recorded where make_testdata recorded them (its "mesh_file", as `convert` finds
    it beside the input)."""
    data = (HERE / entry["path"]).read_bytes()
    found = meshes.read(HERE / entry["mesh_file"]) if entry.get("mesh_file") else None
    job = Job(ConvertRequest(ImportShardingsPass(num_devices=entry["num_devices"], meshes=found)))
    with warnings.catch_warnings():  # mixed_meshes_12's graphs fit neither mesh: expected
        warnings.filterwarnings("ignore", "the shardings fit none of the given meshes")
        result, errors = job.apply(data, entry["path"])
    return result if not errors else "".join(f"{err}\n" for err in errors)


def entries() -> list[dict]:
    data = json.loads((HERE / "manifest.json").read_text())
    items = data if isinstance(data, list) else data["entries"]
    return [e for e in items if e["kind"] in SOURCES]


def main() -> None:
    for entry in entries():
        path = golden_path(entry)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(entry))
        print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()

"""`inspect`: every sharded value of a module or dump in every form, and an audit.

For each graph (a module, or one graph of a torch_xla dump) this reads every sharded value in
the walker's order (module attributes, then per `func.func` its arguments, results, and ops in
pre-order) and reports its type, its sharding as given, as V2, as Shardy on the graph's one
global mesh (`plan_mesh` over all shardings of the graph, as import-shardings derives it), and
the shard each device holds. A module that is already Shardy (`sdy.mesh` and no
`mhlo.sharding`) is read the other way: `sdy.sharding` attributes, `sdy.sharding_constraint`,
`sdy.reshard` and `sdy.manual_computation` shardings, each with its GSPMD equivalent
(`sharding.export.to_hlo`). Then an audit in the spirit of "annotate what you own", as
findings with a severity and a location:

    code                   severity  what
    unannotated-arg        warning   a `@main` argument without a sharding: replicated (GSPMD)
                                     or left to propagation (Shardy)
    small-sharded          warning   a sharded tensor under SMALL_ELEMENTS elements or with
                                     shards under SMALL_SHARD_BYTES: a stream of tiny collectives
    custom-device-order    warning   a V1 list with no iota form: a V2-only path (torch_xla's
                                     CONVERT_SHLO_TO_SHARDY, XLA's importer) loses the order
    no-common-factorization warning  an iota form XLA's importer aborts on (sub-axes needed)
    no-device-count        warning   nothing says how many devices the graph runs on (every
                                     sharding replicated, no `mhlo.num_partitions`)
    device-count-mismatch  error     the graphs of one dump disagree on the device count
    manual-at-boundary     error     a `{manual}` value crosses the function boundary or is
                                     returned from `@main`
    tuple-mismatch, tuple-on-value, not-a-tensor, rank-mismatch, device-count-conflict,
    device-out-of-range    error     the import rules (`shardy_convert.sharding.import_rules`), as
                                     import-shardings checks them
    no-mesh                error     the shardings are not views of one device mesh
    no-recorded-mesh       warning   the shardings fit none of the program's meshes (a mesh
                                     file's): the mesh is inferred, its axes `_axis_N`
    no-sdy-form            error     a sharding that cannot be put on the graph's mesh
    no-gspmd-form          error     (Shardy input) a sharding `to_hlo` cannot express

The package: `inputs` (files, dumps, modules) -> `gspmd` / `shardy` (the two readers, on
`reader`) -> `audit` (findings) -> `report` (the data, JSON) -> `table` and `grid` (text for
the CLI to print).

Bad sharding strings and unparsable modules are not findings but located ShardyConvertErrors
(`FILE[:graph N]:LOC: error: ...`); the other graphs and files are still inspected.

JSON schema (`--format json`, `"schema": "shardy-convert.inspect/1"`); fields are only
added in later versions of the same schema, never renamed:

    {"schema": str,
     "graphs": [{"file": str, "graph": int | null (null: not a dump), "form": "gspmd" | "shardy",
                 "num_devices": int | null, "device_count_from": "shardings" |
                 "mhlo.num_partitions" | "sdy.mesh" | "other graphs of the dump" | null,
                 "meshes": [{"name": str, "mesh": str (e.g. `<["_axis_0"=2]>`)}],
                 "mesh_from": str | null (the recorded mesh @mesh is, from a mesh file),
                 "values": [{"name": str (`%arg3`, `result 0`, `%1`, `%5#1`),
                             "func": str | null, "kind": "arg" | "result" | "op" | "module",
                             "op": str | null (`@Sharding` for custom calls, else the op name),
                             "location": str | null (`LINE:COL`, dump lines for dumps),
                             "type": str | null, "shape": [int | null] | null, "dtype": str | null,
                             "sharding": str (as given), "gspmd": str | null (canonical GSPMD),
                             "v2": str | null (null: no iota form), "sdy": str | null,
                             "shard": null | {"shape": [int] | null, "tiles": int,
                                              "devices_per_shard": int | null,
                                              "uneven": bool, "text": str}}]}],
     "findings": [{"severity": "error" | "warning" | "info", "code": str, "message": str,
                   "file": str | null, "graph": int | null, "location": str | null,
                   "value": str | null}],
     "errors": [{"file": str | null, "graph": int | null, "location": str | null,
                 "message": str}]}
"""

from __future__ import annotations

from .grid import find_value, show
from .inputs import inspect_file, inspect_inputs, inspect_module
from .report import SCHEMA, Diagnostic, GraphReport, InspectReport, Shard, Value
from .shards import shard_info, tile_devices
from .table import format_table

__all__ = [
    "SCHEMA",
    "Diagnostic",
    "GraphReport",
    "InspectReport",
    "Shard",
    "Value",
    "find_value",
    "format_table",
    "inspect_file",
    "inspect_inputs",
    "inspect_module",
    "shard_info",
    "show",
    "tile_devices",
]

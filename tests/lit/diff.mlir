// `diff` and `to-gspmd` from the command line; the cases are the RUN lines (no module here).
// A V1 module equals its V2 twin and its round trip through convert + to-gspmd:
// RUN: shardy-convert v2 %testdata/torch_xla/matmul_2x4.mlir > %t.v2.mlir
// RUN: shardy-convert diff %testdata/torch_xla/matmul_2x4.mlir %t.v2.mlir | filecheck %s --check-prefix=TWINS
// RUN: shardy-convert convert %testdata/torch_xla/matmul_2x4.mlir | shardy-convert to-gspmd - > %t.rt.mlir
// RUN: shardy-convert diff %testdata/torch_xla/matmul_2x4.mlir %t.rt.mlir | filecheck %s --check-prefix=TWINS
// TWINS: EQUAL: 5 placements compared

// One changed placement: exit 1, located in A and B.
// RUN: sed -e '2s/\[4,2\]0,4,1,5,2,6,3,7}"}/[4,2]<=[8]}"}/' %testdata/torch_xla/matmul_2x4.mlir > %t.changed.mlir
// RUN: not shardy-convert diff %testdata/torch_xla/matmul_2x4.mlir %t.changed.mlir | filecheck %s --check-prefix=CHANGED
// CHANGED: matmul_2x4.mlir:2:221: arg 2 of @main: {devices=[4,2]<=[2,4]T(1,0)} vs {devices=[4,2]<=[8]} (B: {{.*}}.changed.mlir:2:221)
// CHANGED-NEXT: DIFFERENT: 1 difference

// JAX's two lowerings of a shard_map differ by the @shmap_body call unless calls are inlined.
// RUN: not shardy-convert diff %testdata/jax/shard_map_full.gspmd.mlir %testdata/jax/shard_map_full.shardy.mlir 2>&1 | filecheck %s --check-prefix=CALL
// CALL-DAG: shard_map_full.gspmd.mlir:13:3: function @shmap_body: defined vs missing
// CALL-DAG: note: if one side calls a function the other inlines
// RUN: shardy-convert diff --inline %testdata/jax/shard_map_full.gspmd.mlir %testdata/jax/shard_map_full.shardy.mlir | filecheck %s --check-prefix=INLINED
// INLINED: EQUAL: 9 placements compared

// Two devices swapped in one V1 list (GSPMD compiles it): the module's shardings are no views
// of one device mesh any more, so it has no Shardy form; it is compared as GSPMD, by the
// devices that hold each tile: a located difference (exit 1) naming the tiles that moved.
// RUN: sed -e '2s/\[2,4\]0,1,2,3,4,5,6,7}"}/[2,4]0,2,1,3,4,5,6,7}"}/' %testdata/torch_xla/matmul_2x4.mlir > %t.swapped.mlir
// RUN: not shardy-convert diff %testdata/torch_xla/matmul_2x4.mlir %t.swapped.mlir 2>&1 | filecheck %s --check-prefix=SWAPPED
// SWAPPED-DAG: note: {{.*}}.swapped.mlir: no Shardy form (the shardings of this module are not views of one device mesh{{.*}}): compared as GSPMD, by the devices that hold each tile
// SWAPPED-DAG: matmul_2x4.mlir:2:297: arg 3 of @main: {devices=[2,4]<=[8]} vs {devices=[2,4]0,2,1,3,4,5,6,7} (B: {{.*}}.swapped.mlir:2:297): devices differ at 2 of 8 tiles: tile [0,1] on 1 vs 2, tile [0,2] on 2 vs 1
// SWAPPED-DAG: DIFFERENT: 1 difference
// The same swap inside one replication group moves no tile:
// RUN: sed -e '2s/\[2,1,4\]0,1,2,3,4,5,6,7 /[2,1,4]1,0,2,3,4,5,6,7 /' %testdata/torch_xla/matmul_2x4.mlir > %t.group.mlir
// RUN: shardy-convert diff %testdata/torch_xla/matmul_2x4.mlir %t.group.mlir | filecheck %s --check-prefix=GROUP
// GROUP: EQUAL: 5 placements compared

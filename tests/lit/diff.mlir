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

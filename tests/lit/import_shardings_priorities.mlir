// RUN: shardy-convert opt %s -p import-shardings --split-input-file | filecheck %s

// Tenstorrent's torch_xla fork writes the GSPMD string and, beside it, the Shardy sharding the
// user asked for, with per-dim priorities and placeholder axis names (`mesh_idx_N`); its
// patched XLA importer gives the imported sharding those priorities. So does this pass: the
// axes come from the GSPMD string, the priorities (and open dims) from the frontend attribute,
// which is taken off; other frontend attributes stay.
// CHECK-LABEL: module @fork_priorities
// CHECK: func.func @main
// CHECK-SAME: mhlo.frontend_attributes = {other = "kept"}
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}p0, {"_axis_1"}p1]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}p2, {}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}p1, {?}p0]>
// CHECK-NOT: xla.sdy.sharding
// CHECK: stablehlo.add
// CHECK-SAME{LITERAL}: {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"_axis_1", ?}p3]>]>}
module @fork_priorities {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {other = "kept", xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22mesh_idx_0\22}p0, {\22mesh_idx_1\22}p1]>"}, mhlo.sharding = "{devices=[2,4]<=[8]}"},
                  %arg1: tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22mesh_idx_1\22}p2, {}p0]>"}, mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"})
      -> (tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22mesh_idx_0\22}p1, {?}p0]>"}, mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}) {
    %0 = stablehlo.add %arg0, %arg1 {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}, {\22mesh_idx_1\22, ?}p3]>"}, mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"} : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}

// -----

// An op with several results states one sharding per result.
// CHECK-LABEL: module @per_value
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"_axis_0"}p0]>, <@mesh, [{"_axis_0"}p1]>]>
module @per_value {
  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>) {
    %0:2 = "stablehlo.optimization_barrier"(%arg0, %arg1) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}p0]>, <@mesh, [{\22x\22}p1]>]>"}, mhlo.sharding = "{{devices=[8]<=[8]}, {devices=[8]<=[8]}}"} : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
    return %0#0, %0#1 : tensor<8xf32>, tensor<8xi32>
  }
}

// -----

// Priorities on a V3 string's own axes.
// CHECK-LABEL: module @on_v3
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"model"}p1, {"data"}p0]>
module @on_v3 {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22mesh_idx_1\22}p1, {\22mesh_idx_0\22}p0]>"}, mhlo.sharding = "{mesh['data'=2,'model'=4], [{'model'}, {'data'}]}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// RUN: shardy-convert opt %s -p export-shardings --split-input-file | filecheck %s

// Func arguments and results: V2 strings; the mesh goes. Replicated and open dims have no axes.
// CHECK-LABEL: module @args_and_results
// CHECK-NOT: sdy.mesh
// CHECK: func.func @main
// CHECK-SAME: mhlo.sharding = "{devices=[2,4]<=[8]}"
// CHECK-SAME: mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
// CHECK-SAME: mhlo.sharding = "{replicated}"
// CHECK-SAME: mhlo.sharding = "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"
module @args_and_results {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                  %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                  %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}]>})
      -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", ?}]>}) {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// A mesh with device_ids: the grid is materialized as a V1 list in that order (ids inside a
// replication group are unordered and printed sorted).
// CHECK-LABEL: module @device_ids_give_v1_lists
// CHECK: mhlo.sharding = "{devices=[2,4]7,6,5,4,3,2,1,0}"
// CHECK-SAME: mhlo.sharding = "{devices=[4,1,2]3,7,2,6,1,5,0,4 last_tile_dim_replicate}"
module @device_ids_give_v1_lists {
  sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                  %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// Sub-axes of one coarse axis (XLA has no common factorization for these GSPMD twins).
// CHECK-LABEL: module @sub_axes
// CHECK: mhlo.sharding = "{devices=[2,3]<=[6]}"
// CHECK-SAME: mhlo.sharding = "{devices=[3,2]<=[6]}"
module @sub_axes {
  sdy.mesh @mesh = <["a"=6]>
  func.func @main(%arg0: tensor<6x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}, {"a":(2)3}]>},
                  %arg1: tensor<6x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)3}, {"a":(3)2}]>}) -> tensor<6x6xf32> {
    return %arg0 : tensor<6x6xf32>
  }
}

// -----

// Op shardings: one result gives one string, several a tuple; a maximal mesh a device.
// CHECK-LABEL: module @op_shardings
// CHECK: stablehlo.add {{.*}}mhlo.sharding = "{devices=[1,8]<=[8]}"
// CHECK: "stablehlo.sort"
// CHECK{LITERAL}: }) {mhlo.sharding = "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}, {replicated}}"}
// CHECK: stablehlo.negate {{.*}}mhlo.sharding = "{maximal device=3}"
module @op_shardings {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xi32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x", "y"}]>]>} : tensor<8x8xf32>
    %1:2 = "stablehlo.sort"(%0, %arg1) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xi32>) -> (tensor<8x8xf32>, tensor<8x8xi32>)
    %2 = stablehlo.negate %1#0 {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_3, []>]>} : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}

// -----

// A constraint becomes @Sharding; its open dims are listed in backend_config.
// CHECK-LABEL: func @constraint_becomes_sharding_custom_call
// CHECK-NEXT: %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
// CHECK-NEXT: %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "unspecified_dims=[0]", mhlo.sharding = "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"}
// CHECK-NEXT: return %1
module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @constraint_becomes_sharding_custom_call(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"x"}]> : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}

// -----

// A manual computation over every axis: JAX's GSPMD encoding, body inlined, {manual} inside.
// CHECK-LABEL: func @full_manual_computation
// CHECK-NEXT: %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x16xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %2 = stablehlo.negate %1
// CHECK-NEXT: %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<4x4xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: return %4
module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @full_manual_computation(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4x4xf32>
      sdy.return %1 : tensor<4x4xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}

// -----

// Partial manual over "x" (JAX shard_map with axis_names={"x"}): the manual group is a
// last_tile_dims subgroup; open dims go to unspecified_dims of both custom calls; a constraint
// inside carries the manual group too.
// CHECK-LABEL: func @partial_manual_computation
// CHECK-NEXT: %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK-NEXT: %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}"}
// CHECK-NEXT: %2 = stablehlo.custom_call @Sharding(%1) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"}
// CHECK-NEXT: %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "", mhlo.sharding = "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}"}
// CHECK-NEXT: %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {backend_config = "", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK-NEXT: return %4
module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @partial_manual_computation(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
      %1 = sdy.sharding_constraint %arg1 <@mesh, [{}, {"y"}]> : tensor<4x16xf32>
      sdy.return %1 : tensor<4x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}

// -----

// JAX's GSPMD lowering calls @shmap_body inside the region: the body's shardings are local to
// the region and carry its manual group.
// CHECK-LABEL: module @called_body_is_manual
// CHECK: %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "", mhlo.sharding = "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}"}
// CHECK-NEXT: %2 = call @shmap_body(%1)
// CHECK: func.func private @shmap_body
// CHECK-NEXT: %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"}
module @called_body_is_manual {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
      %1 = func.call @shmap_body(%arg1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
      sdy.return %1 : tensor<4x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}]> : tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
}

// -----

// Nested manual computations: the inner one's shardings are local to the outer ("x") region.
// CHECK-LABEL: func @nested_manual_computations
// CHECK-NEXT: stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"}
// CHECK-NEXT: stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "", mhlo.sharding = "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}"}
// CHECK-NEXT: stablehlo.custom_call @Sharding(%1) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"}
// CHECK-NEXT: stablehlo.custom_call @SPMDFullToShardShape(%2) {backend_config = "", mhlo.sharding = "{manual}"}
// CHECK-NEXT: stablehlo.negate
// CHECK-NEXT: stablehlo.custom_call @Sharding(%4) {backend_config = "", mhlo.sharding = "{manual}"}
// CHECK-NEXT: stablehlo.custom_call @SPMDShardToFullShape(%5) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"}
// CHECK-NEXT: stablehlo.custom_call @Sharding(%6) {backend_config = "", mhlo.sharding = "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}"}
// CHECK-NEXT: stablehlo.custom_call @SPMDShardToFullShape(%7) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"}
module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @nested_manual_computations(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"y"} (%arg2: tensor<4x4xf32>) {
        %2 = stablehlo.negate %arg2 : tensor<4x4xf32>
        sdy.return %2 : tensor<4x4xf32>
      } : (tensor<4x16xf32>) -> tensor<4x16xf32>
      sdy.return %1 : tensor<4x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}

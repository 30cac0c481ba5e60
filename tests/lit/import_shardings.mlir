// RUN: shardy-convert opt %s -p import-shardings --split-input-file | filecheck %s

// JAX's P('x','y'), P('y', None) on mesh x=2, y=4: the mesh is recovered as _axis_0=2, _axis_1=4.
// CHECK-LABEL: module @mesh_from_v2_shardings
// CHECK: sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{}]>
module @mesh_from_v2_shardings {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"})
      -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"},
          tensor<8xf32> {mhlo.sharding = "{replicated}"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
    return %arg0, %0 : tensor<8x8xf32>, tensor<8xf32>
  }
}

// -----

// A torch_xla Mesh(device_ids=[7..0], (2,4)): the order moves onto the mesh as device_ids.
// CHECK-LABEL: module @custom_device_order
// CHECK: sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {}]>
module @custom_device_order {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]7,6,5,4,3,2,1,0}"},
                  %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]3,7,2,6,1,5,0,4 last_tile_dim_replicate}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// -----

// XLA aborts here (no common factorization of 2x3 and 3x2); one axis of 6 with sub-axes works.
// CHECK-LABEL: module @sub_axes_without_common_factorization
// CHECK: sdy.mesh @mesh = <["_axis_0"=6]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"_axis_0":(1)2}, {"_axis_0":(2)3}]>
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"_axis_0":(1)3}, {"_axis_0":(3)2}]>
module @sub_axes_without_common_factorization {
  func.func @main(%arg0: tensor<6x6xf32> {mhlo.sharding = "{devices=[2,3]<=[6]}"},
                  %arg1: tensor<6x6xf32> {mhlo.sharding = "{devices=[3,2]<=[6]}"}) -> tensor<6x6xf32> {
    return %arg0 : tensor<6x6xf32>
  }
}

// -----

// XLA aborts on a V2 form with no local mesh; relabelling gives an ordinary mesh.
// CHECK-LABEL: module @transposed_iota_without_local_mesh
// CHECK: sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=3], device_ids=[0, 3, 1, 4, 2, 5]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>
module @transposed_iota_without_local_mesh {
  func.func @main(%arg0: tensor<6x6xf32> {mhlo.sharding = "{devices=[2,3]<=[2,3]T(1,0)}"}) -> tensor<6x6xf32> {
    return %arg0 : tensor<6x6xf32>
  }
}

// -----

// All replicated: the mesh still says how many devices (tt-xla#1487), from mhlo.num_partitions.
// CHECK-LABEL: module @all_replicated_still_has_a_mesh
// CHECK: sdy.mesh @mesh = <["_axis_0"=4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{}]>
module @all_replicated_still_has_a_mesh attributes {mhlo.num_partitions = 4 : i32} {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<8xf32> {mhlo.sharding = ""}) {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Only maximal shardings: each on its one device's mesh, no global mesh beside them (nothing
// is placed on it) and no device count needed.
// CHECK-LABEL: module @only_maximal_has_no_global_mesh
// CHECK-NOT: sdy.mesh @mesh
// CHECK: sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
// CHECK-NOT: sdy.mesh @mesh
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>
module @only_maximal_has_no_global_mesh {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{maximal device=3}"}) -> (tensor<8xf32> {mhlo.sharding = "{maximal device=3}"}) {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Maximal, unknown, tuples and ops.
// CHECK-LABEL: module @maximal_unknown_and_tuples
// CHECK: sdy.mesh @mesh = <["_axis_0"=4]>
// CHECK: sdy.mesh @maximal_mesh_2 = <[], device_ids=[2]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@maximal_mesh_2, []>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{?}]>
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"_axis_0"}]>, <@mesh, [{}]>]>
module @maximal_unknown_and_tuples {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{maximal device=2}"},
                  %arg1: tensor<8xf32> {mhlo.sharding = "{unknown}"}) -> tensor<8xf32> {
    %0:2 = stablehlo.custom_call @foo(%arg0, %arg1) {mhlo.sharding = "{{devices=[4]<=[4]}, {replicated}}"} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
    return %0#0 : tensor<8xf32>
  }
}

// -----

// Locations and unrelated attributes are left alone.
// CHECK-LABEL: module @locations_and_attributes_kept
// CHECK: jax.result_info = "result"
// CHECK: stablehlo.transpose
// CHECK-SAME: xla_shape = "f32[8,8]{0,1}"
// CHECK-SAME: loc([[LOC:#loc[0-9]+]])
// CHECK: [[LOC]] = loc("model.py":12:3)
module @locations_and_attributes_kept {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<8x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] {xla_shape = "f32[8,8]{0,1}"} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("model.py":12:3)
    return %0 : tensor<8x8xf32>
  }
}

// -----

// An unannotated @main argument is replicated (closed), as GSPMD compiles it with torch_xla's
// allow_spmd_sharding_propagation_to_parameters=false; unannotated results stay open
// (propagation to outputs is allowed); other functions keep their unannotated values.
// CHECK-LABEL: module @unannotated_main_values
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}
// CHECK-SAME{LITERAL}: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME{LITERAL}: %arg2: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}
// CHECK-SAME: -> (tensor<8x8xf32>, tensor<8x8xf32>) {
// CHECK: func.func private @helper(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32>
module @unannotated_main_values {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}, %arg1: tensor<8x8xf32>,
                  %arg2: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    %1 = func.call @helper(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
  }
  func.func private @helper(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

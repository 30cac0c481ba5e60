// RUN: shardy-convert opt %s -p v1-to-v2 --split-input-file | filecheck %s

// CHECK-LABEL: func @v1_lists_become_iota
// CHECK-SAME: mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"
// CHECK-SAME: mhlo.sharding = "{devices=[2,2,4]<=[2,2,4]T(2,1,0)}"
// CHECK-SAME: mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
func.func @v1_lists_become_iota(
    %arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"},
    %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,2,4]0,8,4,12,1,9,5,13,2,10,6,14,3,11,7,15}"})
    -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}) {
  return %arg0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func @identity_list_and_op_attribute
// CHECK-SAME: mhlo.sharding = "{devices=[2,4]<=[8]}"
// CHECK: stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[8,1]<=[8]}"}
func.func @identity_list_and_op_attribute(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]0,1,2,3,4,5,6,7}"}) -> tensor<8x8xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[8,1]0,1,2,3,4,5,6,7}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func @tuple_elements_each_rewritten
// CHECK{LITERAL}: mhlo.sharding = "{{devices=[2]<=[2]}, {replicated}, {devices=[4,2]<=[2,4]T(1,0)}}"
func.func @tuple_elements_each_rewritten(%arg0: tensor<2xf32>, %arg1: tensor<8x8xf32>) -> tensor<2xf32> {
  %0:3 = stablehlo.custom_call @foo(%arg0, %arg1, %arg1) {mhlo.sharding = "{{devices=[2]0,1}, {replicated}, {devices=[4,2]0,4,1,5,2,6,3,7}}"} : (tensor<2xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<2xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
  return %0#0 : tensor<2xf32>
}

// -----

// A custom device order (torch_xla Mesh(device_ids=...)) has no iota form: kept as given.
// CHECK-LABEL: func @custom_order_left_alone
// CHECK-SAME: mhlo.sharding = "{devices=[2,4]7,6,5,4,3,2,1,0}"
// CHECK-SAME: mhlo.sharding = "{replicated}"
func.func @custom_order_left_alone(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]7,6,5,4,3,2,1,0}"},
                                   %arg1: tensor<8x8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: module attributes
// CHECK-SAME: mhlo.spmd_output_sharding = "{devices=[4,2]<=[2,4]T(1,0)}"
// CHECK-SAME{LITERAL}: mhlo.spmd_parameters_shardings = ["{devices=[2,4]<=[8]}"]
module attributes {mhlo.spmd_parameters_shardings = ["{devices=[2,4]0,1,2,3,4,5,6,7}"], mhlo.spmd_output_sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"} {
  func.func @module_attributes(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

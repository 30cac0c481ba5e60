// RUN: shardy-convert opt %s -p v1-to-v2 --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=WARN < %t.err

// Named (V3) strings become the V2 of the same placement (jaxlib's `v3_to_v2_sharding`): their
// axis names are gone, a max/min reduction is XLA's metadata entry, open dims are closed.
// CHECK-LABEL: module @v3_to_v2
// CHECK: func.func @main
// CHECK-SAME: mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
// CHECK-SAME: mhlo.sharding = "{devices=[2,4]<=[2,4]T(1,0)}"
// CHECK-SAME: mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type=\22sdy::reduction_op\22 op_name=\22MAX\22}}"
// CHECK: stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{maximal device=3}"}
// WARN: v1_to_v2_v3.mlir:[[# @LINE + 2]]:19: arg 0 of @main: warning: V3 sharding has open dims (`?`), which V2 cannot say: they become closed; it is "{mesh['a'=2,'b'=4], [{'b', ?}, {}]}"
module @v3_to_v2 {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'b', ?}, {}]}"},
                  %arg1: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)), [{'a'}, {'b'}]}"})
      -> (tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{maximal_mesh[device_id=3]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// A device order with no iota form: a V1 list, with a warning.
// CHECK-LABEL: module @custom_order
// CHECK: func.func @main
// CHECK-SAME: mhlo.sharding = "{devices=[2,4]3,6,0,5,1,7,2,4}"
// WARN: v1_to_v2_v3.mlir:[[# @LINE + 2]]:19: arg 0 of @main: warning: V3 sharding has a device order with no V2 iota form (no transpose of a reshaped arange): a V1 list
module @custom_order {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], device_ids=(3,6,0,5,1,7,2,4), [{'a'}, {'b'}]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

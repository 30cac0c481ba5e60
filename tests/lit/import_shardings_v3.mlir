// RUN: shardy-convert opt %s -p import-shardings --split-input-file | filecheck %s

// Named (V3) strings, as newer XLA prints them: the Shardy mesh keeps their axis names and
// device order, and each sharding is written as it is (open dims, explicit replicated axes).
// CHECK-LABEL: module @own_names_and_device_order
// CHECK: sdy.mesh @mesh = <["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"model", ?}, {}], replicated={"data"}>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>
// CHECK-NEXT: stablehlo.add
// CHECK-SAME{LITERAL}: {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"model"}, {}], unreduced={"data"}>]>}
module @own_names_and_device_order {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'data'}, {'model'}]}"},
                  %arg1: tensor<8x16xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'model', ?}, {}], replicated={'data'}}"})
      -> (tensor<8x16xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{}, {'model'}]}"}) {
    %0 = stablehlo.add %arg0, %arg1 {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'model'}, {}], unreduced={'data'}}"} : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}

// -----

// V2 strings beside V3 ones go onto the V3 mesh when they are views of it; the iota device
// order `([2,4]T(1,0))` is listed on the Shardy mesh.
// CHECK-LABEL: module @v2_beside_v3
// CHECK: sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[0, 4, 1, 5, 2, 6, 3, 7]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>
module @v2_beside_v3 {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{mesh['x'=2,'y'=4], device_ids=([2,4]T(1,0)), [{'y'}, {}]}"},
                  %arg1: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]<=[2,4]T(1,0)}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// -----

// Sub-axes as written; a custom call's V3 string is placed too.
// CHECK-LABEL: module @sub_axes
// CHECK: sdy.mesh @mesh = <["x"=6]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)3}]>
// CHECK{LITERAL}: stablehlo.custom_call @Sharding(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)3}, {"x":(3)2}]>]>}
module @sub_axes {
  func.func @main(%arg0: tensor<6x6xf32> {mhlo.sharding = "{mesh['x'=6], [{'x':(1)2}, {'x':(2)3}]}"}) -> tensor<6x6xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{mesh['x'=6], [{'x':(1)3}, {'x':(3)2}]}"} : (tensor<6x6xf32>) -> tensor<6x6xf32>
    return %0 : tensor<6x6xf32>
  }
}

// -----

// Two V3 meshes, as several user meshes: the one every sharding fits is the module's mesh.
// `[{'a'}]` on mesh `'a'=8` fits mesh ['p'=2,'q'=4] as {"p", "q"}; the other way would need
// sub-axes of 'a'.
// CHECK-LABEL: module @two_v3_meshes
// CHECK: sdy.mesh @mesh = <["p"=2, "q"=4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"p"}, {"q"}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"p", "q"}, {}]>
module @two_v3_meshes {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['p'=2,'q'=4], [{'p'}, {'q'}]}"},
                  %arg1: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=8], [{'a'}, {}]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// The keyword forms, and one device.
// CHECK-LABEL: module @keyword_forms
// CHECK: sdy.mesh @mesh = <["a"=2, "b"=2]>
// CHECK: sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"a", "b"}>
// CHECK-SAME{LITERAL}: sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>
module @keyword_forms attributes {mhlo.num_partitions = 4 : i32} {
  func.func @main(%arg0: tensor<4x4xf32> {mhlo.sharding = "{mesh['a'=2,'b'=2], replicated}"},
                  %arg1: tensor<4xf32> {mhlo.sharding = "{mesh['a'=2,'b'=2], unreduced}"})
      -> (tensor<4xf32> {mhlo.sharding = "{single_device[device_id=3]}"}) {
    return %arg1 : tensor<4xf32>
  }
}

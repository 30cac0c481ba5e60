// RUN: shardy-convert opt %s -p iota-mesh --split-input-file | filecheck %s
// RUN: shardy-convert opt %s -p iota-mesh --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ORDER

// The order comes back as the pass's result (a note from opt), never as a module attribute.
// ORDER: note: iota-mesh: device order 5,2,7,0,3,6,1,4 taken out of the mesh
// ORDER-NOT: note:
// CHECK-NOT: shardy_convert.device_order
// CHECK: sdy.mesh @mesh = <["data"=2, "model"=4]>
// CHECK: sdy.mesh @maximal = <[], device_ids=[3]>
// CHECK-LABEL: func @custom_order_leaves_the_mesh
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"data"}, {"model"}]>
sdy.mesh @mesh = <["data"=2, "model"=4], device_ids=[5, 2, 7, 0, 3, 6, 1, 4]>
sdy.mesh @maximal = <[], device_ids=[0]>
func.func @custom_order_leaves_the_mesh(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

// CHECK-NOT: shardy_convert.device_order
// CHECK: sdy.mesh @mesh = <["a"=8]>
// CHECK-LABEL: func @iota_mesh_is_left_alone
sdy.mesh @mesh = <["a"=8]>
func.func @iota_mesh_is_left_alone(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

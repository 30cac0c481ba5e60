// RUN: shardy-convert opt %s -p single-device-program --split-input-file | filecheck %s

// What the pass leaves as it is on every jaxlib (by default it rewrites only where this
// jaxlib's Shardy refuses a single-device sharding on an argument: see
// single_device_program_always.mlir and tests/test_maximal.py for that form).

// CHECK-NOT: shardy_convert.device_order
// CHECK: sdy.mesh @mesh = <["a"=4]>
// CHECK: sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
// CHECK-LABEL: func @one_value_on_device_3
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"a"}]>
// CHECK: sdy.sharding_constraint %{{.*}} <@maximal_mesh_3, []>
sdy.mesh @mesh = <["a"=4]>
sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
func.func @one_value_on_device_3(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@maximal_mesh_3, []> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// CHECK-NOT: shardy_convert.device_order
// CHECK: sdy.mesh @mesh = <["a"=4]>
// CHECK-LABEL: func @no_single_device_mesh
sdy.mesh @mesh = <["a"=4]>
func.func @no_single_device_mesh(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

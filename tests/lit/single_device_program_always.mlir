// RUN: shardy-convert opt %s -p 'single-device-program{always=true}' --split-input-file | filecheck %s
// RUN: shardy-convert opt %s -p 'single-device-program{always=true}' --split-input-file 2>&1 >%t | filecheck %s --check-prefix=NOTE

// What the pass found, as MLIR prints pass statistics: the device each program compiles on.
// NOTE: note: single-device-program: device order 3 taken out of the mesh (compile with it as the device assignment)
// NOTE: note: single-device-program: device order 0 taken out of the mesh (compile with it as the device assignment)
// NOTE-NOT: note:

// A program placed whole on device 3 of 4: one partition on the empty mesh, device 3 in the
// device assignment (as JAX lowers a single-device placement since jaxlib 0.11.2).
// CHECK: module attributes {mhlo.num_partitions = 1 : i32, shardy_convert.device_order = array<i64: 3>}
// CHECK: sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
// CHECK-NOT: maximal_mesh_3
// CHECK-LABEL: func @placed_whole_on_device_3
// CHECK-SAME{LITERAL}: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@empty_mesh, [{}, {}]>}
// CHECK-SAME{LITERAL}: %arg1: tensor<f32> {sdy.sharding = #sdy.sharding<@empty_mesh, []>}
// CHECK-SAME{LITERAL}: -> (tensor<8x16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@empty_mesh, [{}, {}]>})
// CHECK-NEXT{LITERAL}: %0 = sdy.sharding_constraint %arg0 <@empty_mesh, [{}, {}]> : tensor<8x16xf32>
// CHECK-NEXT{LITERAL}: %1 = stablehlo.custom_call @foo(%0) {sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}, {}]>]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
module attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]> {stablehlo.mesh = {axes = [], device_ids = dense<3> : tensor<1xi64>}}
  func.func @placed_whole_on_device_3(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}, %arg1: tensor<f32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) -> (tensor<8x16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) {
    %0 = sdy.sharding_constraint %arg0 <@maximal_mesh_3, []> : tensor<8x16xf32>
    %1 = stablehlo.custom_call @foo(%0) {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_3, []>]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}

// -----

// A module that says no device count still says none.
// CHECK: module attributes {shardy_convert.device_order = array<i64: 0>}
// CHECK: sdy.mesh @empty_mesh = <[]>
// CHECK-LABEL: func @no_count_said
// CHECK-SAME{LITERAL}: #sdy.sharding<@empty_mesh, [{}]>
sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
func.func @no_count_said(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_0, []>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// A value placed on one device inside a program placed on others: left as it is (XLA
// compiles a single-device constraint on every jaxlib).
// CHECK-NOT: shardy_convert.device_order
// CHECK: sdy.mesh @mesh = <["a"=4]>
// CHECK: sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
// CHECK-LABEL: func @one_value_on_device_3
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
// CHECK-LABEL: func @nothing_on_one_device
sdy.mesh @mesh = <["a"=4]>
func.func @nothing_on_one_device(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

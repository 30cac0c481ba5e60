// RUN: not shardy-convert opt %s -p 'single-device-program{always=true}' --split-input-file 2>&1 | filecheck %s

// CHECK: single_device_program_errors.mlir:6:1: arg 0 of @argument_on_device_3_beside_a_mesh: error: "{maximal device=3}" on a function argument of a program that places other values on other devices
sdy.mesh @mesh = <["a"=4]>
sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
func.func @argument_on_device_3_beside_a_mesh(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  return %arg1 : tensor<8xf32>
}

// -----

// CHECK: single_device_program_errors.mlir:15:1: result 0 of @results_on_two_devices: error: "{maximal device=0}" on a function result
sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>
func.func @results_on_two_devices(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_0, []>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_1, []>}) {
  return %arg0, %arg0 : tensor<8xf32>, tensor<8xf32>
}

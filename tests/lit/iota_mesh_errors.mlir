// RUN: not shardy-convert opt %s -p iota-mesh 2>&1 | filecheck %s

// CHECK: iota_mesh_errors.mlir:5:1: sdy.mesh: error: meshes in different device orders ([1, 0, 2, 3] and [3, 2, 1, 0]): one device assignment cannot express them
sdy.mesh @a = <["x"=4], device_ids=[1, 0, 2, 3]>
sdy.mesh @b = <["y"=4], device_ids=[3, 2, 1, 0]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@a, [{"x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

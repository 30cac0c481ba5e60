// RUN: shardy-convert opt %s -p 'import-shardings{mesh=data=2,model=4 mesh-device-ids=3,6,0,5,1,7,2,4}' --split-input-file | filecheck %s
// RUN: not shardy-convert opt %s -p 'import-shardings{mesh=data=2,model=4 mesh-device-ids=0,1,2,3,4,5,6,7}' --split-input-file 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not shardy-convert opt %s -p 'import-shardings{mesh-device-ids=0,0}' 2>&1 | filecheck %s --check-prefix=USAGE

// torch_xla's Mesh([3, 6, 0, 5, 1, 7, 2, 4], (2, 4), ("data", "model")): its names, its
// device order. The spec ("model", None) prints the devices of each "model" column, in the
// mesh's order; on another order the same list is no view of the mesh (an error).
// CHECK-LABEL: module @the_users_device_order
// CHECK: sdy.mesh @mesh = <["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"data"}, {"model"}]>
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"model"}, {}]>
// ERR: error: sharding "{devices=[2,4]3,6,0,5,1,7,2,4}" is not a view of the module's device mesh
// USAGE: option mesh-device-ids must be a device order ID,ID,... (each of 0..N-1 once)
module @the_users_device_order {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]3,6,0,5,1,7,2,4}"},
                  %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]3,1,6,7,0,2,5,4 last_tile_dim_replicate}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

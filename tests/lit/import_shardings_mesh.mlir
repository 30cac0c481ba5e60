// RUN: shardy-convert opt %s -p import-shardings --mesh data=2,model=4 --split-input-file | filecheck %s
// RUN: shardy-convert opt %s -p 'import-shardings{mesh=data=2,model=4}' --split-input-file | filecheck %s
// RUN: not shardy-convert opt %s -p import-shardings --mesh a=3,b=2 --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// The user's axis names and order, for torch_xla's Mesh((2, 4), ("data", "model")).
// CHECK-LABEL: module @names_from_the_mesh_option
// CHECK: sdy.mesh @mesh = <["data"=2, "model"=4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"data"}, {"model"}]>
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"model"}, {}]>
// ERR: error: device counts disagree: the shardings say 8, the mesh a=3,b=2 says 6
module @names_from_the_mesh_option {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]0,1,2,3,4,5,6,7}"},
                  %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// -----

// A sharding that splits one of the user's axes uses sub-axes of it.
// CHECK-LABEL: module @sub_axes_of_the_users_axes
// CHECK: sdy.mesh @mesh = <["data"=2, "model"=4]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{"data", "model":(1)2}, {"model":(2)2}]>
module @sub_axes_of_the_users_axes {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

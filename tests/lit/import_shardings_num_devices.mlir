// RUN: shardy-convert opt %s -p import-shardings --num-devices 8 --split-input-file | filecheck %s
// RUN: shardy-convert opt %s -p 'import-shardings{num-devices=8}' --split-input-file | filecheck %s
// RUN: not shardy-convert opt %s -p import-shardings --num-devices 4 --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// All replicated: the device count comes from the option (tt-xla#1487: a mesh is still emitted).
// CHECK-LABEL: module @replicated_graph_gets_the_given_count
// CHECK: sdy.mesh @mesh = <["_axis_0"=8]>
// CHECK: func.func @main
// CHECK-SAME{LITERAL}: #sdy.sharding<@mesh, [{}, {}]>
// ERR: import_shardings_num_devices.mlir:22:19: arg 0 of @main: error: sharding "{devices=[8,1]<=[8]}" spans 8 devices but num_devices says 4
module @replicated_graph_gets_the_given_count {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// CHECK-LABEL: module @shardings_agree_with_the_count
// CHECK: sdy.mesh @mesh = <["_axis_0"=8]>
module @shardings_agree_with_the_count {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

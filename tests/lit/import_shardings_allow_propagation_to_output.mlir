// RUN: shardy-convert opt %s -p import-shardings | filecheck %s --check-prefix=OPEN
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-output=true}' | filecheck %s --check-prefix=OPEN
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-output=0}' | filecheck %s --check-prefix=CLOSED
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-output=1,0}' | filecheck %s --check-prefix=SECOND
// RUN: not shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-output=true,true,true}' 2>&1 | filecheck %s --check-prefix=LENGTH

// XLA's allow_spmd_sharding_propagation_to_output (torch_xla: true): an unannotated result
// stays open to propagation where it is allowed, and is closed replicated where it is not.
// OPEN: func.func @main
// OPEN-SAME: -> (tensor<8x8xf32>, tensor<8x8xf32>)
// CLOSED: func.func @main
// CLOSED-SAME{LITERAL}: -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// SECOND: func.func @main
// SECOND-SAME{LITERAL}: -> (tensor<8x8xf32>, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// LENGTH: import_shardings_allow_propagation_to_output.mlir:[[# @LINE + 2]]:3: error: allow_spmd_sharding_propagation_to_output has 3 values but @main has 2 results
module @two_unannotated_results {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
    return %0, %arg0 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}

// RUN: shardy-convert opt %s -p import-shardings | filecheck %s --check-prefix=CLOSED
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-parameters=false}' | filecheck %s --check-prefix=CLOSED
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-parameters=true}' | filecheck %s --check-prefix=OPEN
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-parameters=true,false}' | filecheck %s --check-prefix=CLOSED
// RUN: shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-parameters=false,true}' | filecheck %s --check-prefix=OPEN
// RUN: not shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-parameters=true,false,true}' 2>&1 | filecheck %s --check-prefix=LENGTH
// RUN: not shardy-convert opt %s -p 'import-shardings{allow-spmd-sharding-propagation-to-parameters=maybe}' 2>&1 | filecheck %s --check-prefix=BAD

// XLA's allow_spmd_sharding_propagation_to_parameters: one flag for all arguments, or one per
// argument. Where propagation may not reach an unannotated argument, GSPMD replicates it: it is
// closed replicated; where it may, it stays open. The annotated %arg0 is the same either way.
// CLOSED: func.func @main
// CLOSED-SAME{LITERAL}: %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}
// CLOSED-SAME{LITERAL}: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// OPEN: func.func @main
// OPEN-SAME{LITERAL}: %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}
// OPEN-SAME: %arg1: tensor<8x8xf32>)
// LENGTH: import_shardings_allow_propagation_to_parameters.mlir:[[# @LINE + 3]]:3: error: allow_spmd_sharding_propagation_to_parameters has 3 values but @main has 2 arguments
// BAD: Error: pass import-shardings: option allow-spmd-sharding-propagation-to-parameters must be true or false, or one per value (true,false,...), not "maybe"
module @one_annotated_one_not {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"},
                  %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

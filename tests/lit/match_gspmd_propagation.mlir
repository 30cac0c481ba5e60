// RUN: %if op-locations-settable %{ shardy-convert opt %s -p 'match-gspmd-propagation{num-devices=8}' --split-input-file 2>%t.notes | filecheck %s %}
// RUN: %if op-locations-settable %{ filecheck %s --check-prefix=NOTE < %t.notes %}
// RUN: %if op-locations-settable %{ shardy-convert opt %s -p 'match-gspmd-propagation{num-devices=8 max-rounds=1}' --split-input-file 2>&1 >%t.one | filecheck %s --check-prefix=ONE %}
// RUN: %if !op-locations-settable %{ shardy-convert opt %s -p 'match-gspmd-propagation{num-devices=8}' --split-input-file 2>&1 >%t.old | filecheck %s --check-prefix=OLD %}

// Where jaxlib's MLIR bindings cannot set an op's location (0.7.1), XLA's view of the program
// cannot be matched to its values: the pass leaves every module as it is and says why.
// OLD: match_gspmd_propagation.mlir: note: match-gspmd-propagation: 0 pins, 0 values still differ after 0 rounds; 0.000 s; jaxlib {{.*}}'s MLIR bindings cannot set an op's location

// match-gspmd-propagation compiles the module with GSPMD and its conversion with Shardy on
// jaxlib's CPU client, reads both partitioners' decisions after propagation, and pins GSPMD's
// where Shardy's departs from it and no operand's does (the divergence starts there), round by
// round. The pins are `@Sharding` calls (GSPMD form): import-custom-calls makes them
// `sdy.sharding_constraint`s.

// torch_xla's matmul of the README (testdata/torch_xla/matmul_2x4.mlir): GSPMD keeps the
// dot's tiling through the multiply and the add, Shardy takes the multiply's operand %arg1's
// (1.81x the collective bytes). Pinned: the multiply and the maximum (round 1, where the
// chains start), the add (round 2, still Shardy's between two pinned operands); the last dot
// follows, and the constant needs no pin (made on every device it is used on). With one
// round, the first round's pins are written and the values after them are still counted.
// CHECK-LABEL: func @main
// CHECK: %cst = stablehlo.constant
// CHECK-NEXT: %0 = stablehlo.dot_general %arg3, %arg2
// CHECK-NEXT: %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"}
// CHECK-NEXT: %2 = stablehlo.multiply %1, %arg1
// CHECK-NEXT: %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"}
// CHECK-NEXT: %4 = stablehlo.maximum %arg0, %cst
// CHECK-NEXT: %5 = stablehlo.custom_call @Sharding(%4) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}
// CHECK-NEXT: %6 = stablehlo.add %3, %5
// CHECK-NEXT: %7 = stablehlo.custom_call @Sharding(%6) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"}
// CHECK-NEXT: %8 = stablehlo.transpose %arg0
// CHECK-NEXT: %9 = stablehlo.dot_general %7, %8
// CHECK-NEXT: return %9
// NOTE: match_gspmd_propagation.mlir: note: match-gspmd-propagation: 3 pins, 0 values still differ after 3 rounds; {{[0-9.]+}} s{{$}}
// ONE: match_gspmd_propagation.mlir: note: match-gspmd-propagation: 2 pins, 2 values still differ after 1 round; {{[0-9.]+}} s{{$}}
module @IrToHlo.18 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"}, %arg2: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"}, %arg3: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]0,1,2,3,4,5,6,7}"}) -> tensor<8x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8x8xf32>
    %0 = stablehlo.dot_general %arg3, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.multiply %1, %arg1 : tensor<8x8xf32>
    %3 = stablehlo.maximum %arg0, %cst : tensor<8x8xf32>
    %4 = stablehlo.add %2, %3 : tensor<8x8xf32>
    %5 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,8]{0,1}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %6 = stablehlo.dot_general %4, %5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %6 : tensor<8x8xf32>
  }
}

// -----

// Both partitioners decide alike: nothing is pinned, the module is left as it is.
// CHECK-LABEL: func.func private @same_decisions
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg0
// CHECK-NEXT: return %0
// NOTE: match_gspmd_propagation.mlir: note: match-gspmd-propagation: 0 pins, 0 values still differ after 1 round; {{[0-9.]+}} s{{$}}
func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<8x16xf32> {
  %0 = call @same_decisions(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func private @same_decisions(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

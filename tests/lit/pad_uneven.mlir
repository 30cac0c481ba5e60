// RUN: shardy-convert opt %s -p pad-uneven --split-input-file | filecheck %s

// A [20, 10] weight split 8 ways (GSPMD: 3 rows a device, 4 rows padding): @main takes the
// padded [24, 10], the logical value is sliced out first; the annotated result is padded.
// CHECK-LABEL: func @main
// CHECK-SAME: %arg0: tensor<24x10xf32> {mhlo.sharding = "{devices=[8,1]0,1,2,3,4,5,6,7}"}
// CHECK-SAME: %arg1: tensor<20x10xf32>
// CHECK-SAME: -> (tensor<24x10xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
// CHECK-NEXT: %0 = stablehlo.slice %arg0 [0:20, 0:10] : (tensor<24x10xf32>) -> tensor<20x10xf32>
// CHECK-NEXT: %1 = stablehlo.subtract %0, %arg1
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %2 = stablehlo.pad %1, %cst, low = [0, 0], high = [4, 0], interior = [0, 0] : (tensor<20x10xf32>, tensor<f32>) -> tensor<24x10xf32>
// CHECK-NEXT: return %2 : tensor<24x10xf32>
func.func @main(%arg0: tensor<20x10xf32> {mhlo.sharding = "{devices=[8,1]0,1,2,3,4,5,6,7}"}, %arg1: tensor<20x10xf32>) -> (tensor<20x10xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) {
  %0 = stablehlo.subtract %arg0, %arg1 : tensor<20x10xf32>
  return %0 : tensor<20x10xf32>
}

// -----

// A @Sharding on a [1, 64] value split 8 ways constrains the padded [8, 64] value (device 0
// holds the row); the rest of the program reads the slice. Integers pad with 0 too.
// CHECK-LABEL: func @constraint
// CHECK-NEXT: %c = stablehlo.constant dense<0> : tensor<i32>
// CHECK-NEXT: %0 = stablehlo.pad %arg0, %c, low = [0, 0], high = [7, 0], interior = [0, 0] : (tensor<1x64xi32>, tensor<i32>) -> tensor<8x64xi32>
// CHECK-NEXT: %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[8,1]<=[8]}"} : (tensor<8x64xi32>) -> tensor<8x64xi32>
// CHECK-NEXT: %2 = stablehlo.slice %1 [0:1, 0:64] : (tensor<8x64xi32>) -> tensor<1x64xi32>
// CHECK-NEXT: return %2 : tensor<1x64xi32>
func.func @constraint(%arg0: tensor<1x64xi32>) -> tensor<1x64xi32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[8,1]<=[8]}"} : (tensor<1x64xi32>) -> tensor<1x64xi32>
  return %0 : tensor<1x64xi32>
}

// -----

// Another function's argument sharding becomes a @Sharding at its entry, padded there; even
// shardings are left alone.
// CHECK-LABEL: func private @callee
// CHECK-SAME: (%arg0: tensor<3xf32>, %arg1: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"})
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %0 = stablehlo.pad %arg0, %cst, low = [0], high = [1], interior = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = stablehlo.slice %1 [0:3] : (tensor<4xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %2
func.func private @callee(%arg0: tensor<3xf32> {mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<3xf32> {
  return %arg0 : tensor<3xf32>
}

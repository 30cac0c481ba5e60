// RUN: not shardy-convert opt %s -p pad-uneven --split-input-file 2>&1 | filecheck %s

// An op's own uneven sharding has no padded form: refused, naming the value, its shape, the
// dim and what to change.
// CHECK: pad_uneven_errors.mlir:7:8: stablehlo.negate: error: a value of shape [20, 10] sharded '{devices=[8,1]<=[8]}': dim 0 of size 20 is split 8 ways, which GSPMD pads and Shardy cannot (the sharding of stablehlo.negate has no padded form); make dim 0 a multiple of 8 (pad the tensor) or shard it fewer ways
func.func @main(%arg0: tensor<20x10xf32>) -> tensor<20x10xf32> {
  %0 = stablehlo.negate %arg0 {mhlo.sharding = "{devices=[8,1]<=[8]}"} : tensor<20x10xf32>
  return %0 : tensor<20x10xf32>
}

// -----

// The entry of a manual region: torch_xla's manual shards of an uneven value (ceil(6/4) = 2
// rows, 8 in all) have no Shardy form (a manual computation's local shape divides its global).
// CHECK: pad_uneven_errors.mlir:17:8: stablehlo.custom_call: error: a value of shape [6, 8] sharded '{devices=[4,1]<=[4]}': dim 0 of size 6 is split 4 ways, which GSPMD pads and Shardy cannot (a manual region's boundary has no padded form); make dim 0 a multiple of 4 (pad the tensor) or shard it fewer ways
func.func @manual_entry(%arg0: tensor<6x8xf32>) -> tensor<2x8xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<6x8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

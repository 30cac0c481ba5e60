// RUN: not shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8}' --split-input-file 2>&1 | filecheck %s
// RUN: not shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=0}' 2>&1 | filecheck %s --check-prefix=BAD

// The import's checks run before XLA sees the module (XLA's parser aborts the process on some
// malformed shardings): a bad sharding is the conversion's own located error, exit 1.
// CHECK: match_gspmd_boundary_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: tile dims [4, 2] need 8 device ids but 3 are listed
module @short_device_list {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]0,1,2}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// -----

// CHECK: match_gspmd_boundary_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: sharding "{devices=[16]<=[16]}" spans 16 devices but num_devices says 8
module @more_devices_than_the_count {
  func.func @main(%arg0: tensor<16xf32> {mhlo.sharding = "{devices=[16]<=[16]}"}) -> tensor<16xf32> {
    return %arg0 : tensor<16xf32>
  }
}

// BAD: option num-devices must be a positive count, not "0"

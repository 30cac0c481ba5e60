// RUN: not shardy-convert opt %s -p import-shardings --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// The frontend attribute beside a GSPMD string must be a Shardy sharding of the value's rank.
// ERR: import_shardings_priorities_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: the Shardy sharding stated beside it, #sdy.sharding<@mesh, [{"mesh_idx_0"}p0]>, has 1 dim but the value has rank 2
module @rank_mismatch {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22mesh_idx_0\22}p0]>"}, mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// -----

// ERR: import_shardings_priorities_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: xla.sdy.sharding "#sdy.sharding<@mesh, [{p0}]>" is no Shardy sharding:
module @unparsable {
  func.func @main(%arg0: tensor<8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{p0}]>"}, mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// RUN: not shardy-convert opt %s -p import-round-trip --split-input-file 2>&1 | filecheck %s

// A body called without its round-trip custom calls is an error.
// CHECK: import_round_trip_errors.mlir:[[# @LINE + 4]]:10: func.call: error: @xla.sdy.manual_computation_body is called without xla.sdy.GlobalToLocalShape or xla.sdy.LocalToGlobalShape
module @bare_call {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @xla.sdy.manual_computation_body(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func @xla.sdy.manual_computation_body(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// The round-trip custom calls carry their Shardy attributes as strings; a bad one is located.
// CHECK: import_round_trip_errors.mlir:[[# @LINE + 4]]:10: stablehlo.custom_call: error: xla.sdy.in_shardings "oops" of xla.sdy.GlobalToLocalShape is not a Shardy attribute
module @bad_attribute {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "oops", xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>"}} : (tensor<4xf32>) -> tensor<2xf32>
    %1 = call @xla.sdy.manual_computation_body(%0) : (tensor<2xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}]>]>"}} : (tensor<2xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
  func.func @xla.sdy.manual_computation_body(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    return %arg0 : tensor<2xf32>
  }
}

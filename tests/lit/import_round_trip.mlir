// RUN: shardy-convert opt %s -p import-round-trip --split-input-file | filecheck %s

// A manual computation in Shardy's round-trip form (what a portable artifact carries, after
// xla-sdy-round-trip-import-shardy-attrs) becomes an sdy.manual_computation with the body
// inlined; the body func goes.
// CHECK-LABEL: module @manual_computation
// CHECK: %[[MC:.*]] = sdy.manual_computation(%arg0)
// CHECK-SAME{LITERAL}: in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
// CHECK-NEXT: %[[NEG:.*]] = stablehlo.negate %arg1 : tensor<4x16xf32>
// CHECK-NEXT: sdy.return %[[NEG]] : tensor<4x16xf32>
// CHECK-NEXT: } : (tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[MC]]
// CHECK-NOT: xla.sdy
module @manual_computation {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<4x16xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22x\22, ?}, {?}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>"}} : (tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = call @xla.sdy.manual_computation_body(%0) {mhlo.frontend_attributes = {inlineable = "false"}} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>"}} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    return %2 : tensor<4x16xf32>
  }
  func.func @xla.sdy.manual_computation_body(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
}

// -----

// Nested manual computations: the inner one is formed inside the outer one's body.
// CHECK-LABEL: module @nested
// CHECK: sdy.manual_computation(%arg0)
// CHECK-SAME: manual_axes={"x"}
// CHECK: sdy.manual_computation(%arg1)
// CHECK-SAME: manual_axes={"y"}
// CHECK: stablehlo.negate
// CHECK-NOT: func.func @xla.sdy
module @nested {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}, {}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>"}} : (tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = call @xla.sdy.manual_computation_body(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}, {}]>]>"}} : (tensor<4x16xf32>) -> tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
  func.func @xla.sdy.manual_computation_body(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{}, {\22y\22}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22y\22}>"}} : (tensor<4x16xf32>) -> tensor<4x4xf32>
    %1 = call @xla.sdy.manual_computation_body_0(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22y\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{}, {\22y\22}]>]>"}} : (tensor<4x4xf32>) -> tensor<4x16xf32>
    return %2 : tensor<4x16xf32>
  }
  func.func @xla.sdy.manual_computation_body_0(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}


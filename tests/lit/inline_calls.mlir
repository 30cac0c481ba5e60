// RUN: shardy-convert opt %s -p inline-calls --split-input-file | filecheck %s

// A call becomes a copy of the callee's body, its arguments bound to the call's operands;
// the callee stays (symbol-dce removes private ones).
// CHECK-LABEL: module @one_call
// CHECK: func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %arg0, %arg0 : tensor<8xf32>
// CHECK-NEXT: %[[PROD:.*]] = stablehlo.multiply %[[SUM]], %arg0 : tensor<8xf32>
// CHECK-NEXT: return %[[PROD]] : tensor<8xf32>
// CHECK: func.func private @double
module @one_call {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @double(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @double(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// Nested calls are inlined all the way down; shardings on the callee's ops come along.
// CHECK-LABEL: module @nested_calls
// CHECK: func.func @main
// CHECK-NOT: {{^ *%.* = call @}}
// CHECK: stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2]<=[2]}"}
// CHECK-NEXT: stablehlo.negate
// CHECK-NEXT: return
module @nested_calls {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @outer(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @outer(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = call @inner(%0) : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @inner(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.negate %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A call to a func the module does not define (a declaration) stays.
// CHECK-LABEL: module @declaration_stays
// CHECK: call @extern
module @declaration_stays {
  func.func private @extern(tensor<8xf32>) -> tensor<8xf32>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @extern(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

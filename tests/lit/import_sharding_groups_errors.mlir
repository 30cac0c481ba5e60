// RUN: not shardy-convert opt %s -p import-sharding-groups --split-input-file 2>&1 | filecheck %s

// A group Shardy cannot hold is an error, never dropped: a tuple value has no sharding group.
// CHECK: import_sharding_groups_errors.mlir:5:1: result 0 of @tuple_result: error: shard group in '{{[{][{]}}unknown shard_as 0}, {replicated}}' on a value of type tuple<tensor<8xf32>, tensor<8xf32>>: Shardy's sharding groups take ranked tensors
func.func @tuple_result(%arg0: tensor<8xf32>) -> (tuple<tensor<8xf32>, tensor<8xf32>> {mhlo.sharding = "{{unknown shard_as 0}, {replicated}}"}) {
  %0 = stablehlo.tuple %arg0, %arg0 : tuple<tensor<8xf32>, tensor<8xf32>>
  return %0 : tuple<tensor<8xf32>, tensor<8xf32>>
}

// -----

// CHECK: import_sharding_groups_errors.mlir:13:22: arg 0 of @token_arg: error: shard group in '{unknown shard_like 1}' on a value of type !stablehlo.token: Shardy's sharding groups take ranked tensors
func.func @token_arg(%arg0: !stablehlo.token {mhlo.sharding = "{unknown shard_like 1}"}) -> !stablehlo.token {
  return %arg0 : !stablehlo.token
}

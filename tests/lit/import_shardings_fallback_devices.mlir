// RUN: shardy-convert opt %s -p 'import-shardings{fallback-devices=4}' 2>&1 | filecheck %s
// RUN: shardy-convert opt %s -p import-shardings 2>&1 | filecheck %s --check-prefix=NONE
// RUN: not shardy-convert opt %s -p 'import-shardings{fallback-devices=0}' 2>&1 | filecheck %s --check-prefix=BAD

// Nothing in the module says how many devices it runs on (every sharding replicated, no
// mhlo.num_partitions): fallback-devices gives the count, else a mesh with no axes and a
// warning naming opt's flag.
// CHECK-NOT: warning
// CHECK: sdy.mesh @mesh = <["_axis_0"=4]>
// NONE: warning: no sharding, mhlo.num_partitions or device count says how many devices
// NONE-SAME: give the count with --num-devices N
// NONE: sdy.mesh @mesh = <[]>
// BAD: Error: pass import-shardings: option fallback-devices must be a positive count, not "0"
module @all_replicated {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

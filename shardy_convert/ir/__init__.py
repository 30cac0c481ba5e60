"""The MLIR boundary: the only folder that imports `jaxlib.mlir` (contexts, parsing and printing,
the pass pipeline runner and its analyses, the walker, finding and cloning ops, `#sdy` attribute
readers and builders, manual regions, the MLIR bindings' compat, legacy i1). jaxlib's XLA
client is xla/'s, beside it.
May use: errors, cpp_stderr, sharding."""

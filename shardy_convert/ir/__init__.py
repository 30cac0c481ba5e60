"""The MLIR boundary: the only folder that imports `jaxlib.mlir` (contexts, parsing and printing,
the walker, finding and cloning ops, `#sdy` attribute readers and builders, manual regions,
the MLIR bindings' compat, legacy i1). jaxlib's XLA client is xla/'s, beside it.
May use: errors, options, cpp_stderr, sharding."""

"""The XLA boundary: the only folder that imports jaxlib's XLA client (`jaxlib.xla_client`,
`jaxlib._jax`, `jaxlib._hlo`) or jax (as JAX's own `compiler.py` is for jax): compile options
(`options`), CPU clients of N devices (`clients`, one pool), compiling and what a compiled
program says (`compiler`: its shardings, optimized HLO, memory, cost), running it (`execute`),
and every private name of jaxlib and jax, named with the releases it was checked on (`compat`:
XLA's HLO readers and portable artifacts too). It takes programs as text or bytes and never
parses MLIR itself (that is ir/, beside it).
May use: errors, sharding, cpp_stderr, lru."""

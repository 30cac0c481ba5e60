"""The PJRT plugin path: the compile hook and its cache, the wrapper's Python side and its C
library (`_wrapper/`), compile options, optimized programs, plugin checks, torch_xla's
`use_plugin`. May use every floor below: errors, options, sharding, ir, xla, formats, passes,
converter (never commands/ or cli/)."""

"""torch_xla's side of the plugin path: `use` (`use_plugin`: stock torch_xla on a PJRT plugin
through the wrapper), `registration` (how torch_xla is told of the plugin and its device
type) and `mesh_recorder` (the program's Meshes and mark_sharding calls, as they are made).
Imports nothing: the wrapper's side reads the recorder without loading torch_xla."""

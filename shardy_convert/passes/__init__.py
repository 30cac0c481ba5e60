"""The rewrite passes, one per module, with their registry (`registry.PASSES`), the pipeline
that runs them beside Shardy's passes (`pipeline`) and the pipeline text parser
(`pipeline_text`). May use: errors, options, sharding, ir, xla, formats."""

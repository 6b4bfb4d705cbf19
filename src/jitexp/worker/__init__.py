"""The worker: one measured process. Builds the inputs, makes each mode's call, times the user's loop, probes compiles,
memory and cache misses, checks outputs, and hands a ProcessResult back. The only package that imports JAX."""

"""The analysis: statistics over processes and samples, explanations, rows, and value-to-text. Records in, rows and
words out; no processes, no files, no JAX."""

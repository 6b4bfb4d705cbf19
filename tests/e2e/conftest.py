"""tests/e2e: real worker processes and the installed commands (`jitexp`, `jitexp-report`, `jitexp-compare`), one
test per feature or CLI path, not one per built-in or per error message. Everything is allowed here; keep each test
at `timing=quick` and tiny sizes, and put what can run without a process in tests/unit or tests/inprocess."""

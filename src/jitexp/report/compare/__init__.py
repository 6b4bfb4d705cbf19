"""Two runs compared (jitexp-compare, jitexp.compare): each side loaded and its cases matched (``runs``), NEW/BASE
per case and metric with CIs, verdicts and the rows that fail the gate (``gate``), the host's own drift between them
(``host_drift``), the table and notes in words (``text``), the ratio chart (``chart``), and the command (``cli``).
"""

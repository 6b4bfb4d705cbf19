"""What more than one report reads: a case in a results frame and its column helpers (``cases``: also a machine and
the identity columns across runs), and the points a growth is fitted to (``growth``). Imports no other room of
report/.
"""

"""Many runs on one timeline (jitexp-history, jitexp.history): the runs ordered by the commit they measured
(``timeline``), the steps where a case's level changed (``steps``, pure), the page (``page``) and the command
(``cli``). ``jitexp-history bisect`` lives in jitexp/bisection.py, at the entry points' layer: it runs git and
jitexp itself.
"""

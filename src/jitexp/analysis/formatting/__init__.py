"""Pure value-to-text for everything that prints, by what it words: ``values`` (missing values, numbers, units),
``tables`` (frames as text and markdown tables), ``phrases`` (params and knobs as labels, verdicts, pay-off,
ratios, a change's sentence) and ``answer`` (the job's one line and its clauses).

Nothing here reads files or knows a results frame's grouping; report/run/tables.py builds the frames, these
modules word them. This face hands on every public name, for callers that write ``formatting.format_seconds``;
new code imports the module it needs.
"""

from jitexp.analysis.formatting.answer import *  # noqa: F403
from jitexp.analysis.formatting.phrases import *  # noqa: F403
from jitexp.analysis.formatting.tables import *  # noqa: F403
from jitexp.analysis.formatting.values import *  # noqa: F403

"""OmegaConf's interpolation grammar parsed once per distinct string: OmegaConf parses an interpolation (ANTLR, in
pure Python) each time it validates or resolves one, and each compose and conversion meets the same few strings
again (jitexp's help template alone, ~3 ms a parse, twice a compose; `${size}` in every argument).

The memo is keyed on the parse's whole input (the string, the grammar rule, the lexer mode): a parse depends on
nothing else. A string that fails to parse is not kept (it raises each time, as before). A parse tree is only read
after it is made (OmegaConf's visitor walks it and changes nothing), so one tree serves every resolution.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

# the modules that call the parser by a name of their own (`from .grammar_parser import parse`)
CALLERS = ("omegaconf.base", "omegaconf._utils", "omegaconf.resolvers.oc", "omegaconf.grammar_parser")
MEMO_SIZE = 512  # distinct strings kept; a compose meets ~30


def install() -> None:
    """OmegaConf's parse replaced by its memo in every OmegaConf module that calls it, once per process."""
    from omegaconf import grammar_parser

    original = grammar_parser.parse
    if getattr(original, "jitexp_memo", False):
        return
    memo: Any = functools.lru_cache(maxsize=MEMO_SIZE)(original)
    memo.jitexp_memo = True
    for name in CALLERS:
        module = importlib.import_module(name)
        if getattr(module, "parse", None) is original:
            module.parse = memo  # type: ignore[attr-defined]

"""A Ctrl-C held while Hydra composes the run's config, raised at the next line of jitexp's own (docs/decisions.md,
"A Ctrl-C while Hydra composes is held until jitexp's own code")."""

from __future__ import annotations

import signal
import threading
from typing import Any


class HeldInterrupt:
    """The driver's Ctrl-C, noted instead of raised between `hold` and `release`: a KeyboardInterrupt inside
    OmegaConf's flag context leaves it half-set, and Hydra prints the AttributeError that follows as a traceback."""

    def __init__(self) -> None:
        self.held = self.pending = False

    def _note(self, signum: int, frame: Any) -> None:
        self.pending = True

    def hold(self) -> None:
        """Note Ctrl-C from now on (in the main thread only: signal handlers live there)."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._note)
            self.held = True

    def release(self) -> None:
        """Python's own Ctrl-C again; one that came while held is raised now. Without a hold, nothing happens."""
        if self.held:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self.held = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


held = HeldInterrupt()

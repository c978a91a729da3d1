"""What a debugger move showed, kept in the action log for the exported notebook."""
from __future__ import annotations

import logging
from typing import Any

from ..export.states import shown

LOG = logging.getLogger("icedtea_jupyter")
_LARGEST = 200_000  # characters kept per move; a larger view is re-shown unchecked
_MOST_WORKERS = 64


def shown_by(snapshot: Any) -> str | None:
    """The text the export prints after this move (None: too large to keep, or the
    view could not be read)."""
    try:
        if len(snapshot.workers()) > _MOST_WORKERS:
            return None
        text = shown(snapshot)
    except Exception:  # a view that cannot be shown: the move is logged without it
        LOG.debug("icedtea: no text for a move", exc_info=True)
        return None
    return text if len(text) <= _LARGEST else None

"""Decisions taken on public dummy records, shared by the losses that would take them alike.

A ``CallableLoss`` tries its callable on dummy records (``optim.dummy``) to decide how to
evaluate and differentiate it. What it finds depends on public quantities only (the
callables, the space, the backend, the settings, the public point it decides at), so a
table keyed by them lets every later loss with the same key reuse the decisions instead
of trying the callable again. The table keeps the ``MAX_SHARED`` latest keys, and with
them references to their callables and spaces.
"""

import threading
from collections import OrderedDict

SHARED_DECISIONS = OrderedDict()  # key -> {decision name: decision}
MAX_SHARED = 64  # the oldest keys are dropped beyond this
_LOCK = threading.Lock()


def decisions_for(key):
    """The decisions of ``key``, a dict to read and fill; a fresh one if unhashable.

    Parameters
    ----------
    key : tuple
        Public quantities only (never a data value).

    Returns
    -------
    decisions : dict
        Shared by every caller with an equal key while it is among the latest
        ``MAX_SHARED``; an unhashable key (a callable without a hash) gets its own.
    """
    try:
        hash(key)
    except TypeError:
        return {}
    with _LOCK:
        decisions = SHARED_DECISIONS.setdefault(key, {})
        SHARED_DECISIONS.move_to_end(key)
        while len(SHARED_DECISIONS) > MAX_SHARED:
            SHARED_DECISIONS.popitem(last=False)
    return decisions

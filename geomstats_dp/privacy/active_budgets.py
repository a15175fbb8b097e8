"""The budgets entered with ``with budget:``, in this context and in every thread.

Each context (thread, asyncio task) keeps its own stack of entered budgets in a
``contextvars.ContextVar``; the innermost one is the default of the estimators created and
fitted there. A new thread starts from an empty context: a fit in a worker thread
(``ThreadPoolExecutor``, joblib's threading backend) finds no budget of its own, and is
charged to the budget of the block that is open in another thread while it starts. The
blocks open in each thread are recorded here for that purpose; when blocks of different
budgets are open in several threads, such a fit cannot tell which one it belongs to and
is refused (pass ``budget=`` explicitly).
"""

import contextvars
import threading

_ACTIVE = contextvars.ContextVar("geomstats_dp_active_budgets", default=())
_OPEN = {}  # thread ident -> list of the budgets entered in that thread, innermost last
_OPEN_LOCK = threading.Lock()


def enter(budget):
    """Record that ``with budget:`` was entered in the current context and thread."""
    _ACTIVE.set(_ACTIVE.get() + (budget,))
    with _OPEN_LOCK:
        _OPEN.setdefault(threading.get_ident(), []).append(budget)


def leave(budget):
    """Record that the innermost ``with budget:`` block of ``budget`` was left."""
    active = _ACTIVE.get()
    if active and active[-1] is budget:
        _ACTIVE.set(active[:-1])
    with _OPEN_LOCK:
        stacks = [_OPEN.get(threading.get_ident(), [])] + list(_OPEN.values())
        for stack in stacks:
            if any(entry is budget for entry in stack):
                index = max(i for i, entry in enumerate(stack) if entry is budget)
                del stack[index]
                break
        for ident in [ident for ident, stack in _OPEN.items() if not stack]:
            del _OPEN[ident]


def context_budget():
    """The innermost budget entered in this context, or None."""
    active = _ACTIVE.get()
    return active[-1] if active else None


def open_budget():
    """The budget a fit starting now should charge when none was given.

    Returns
    -------
    budget : PrivacyBudget or None
        The innermost budget of this context; else the innermost budget of the blocks
        open in other threads, if they agree on one; else None.

    Raises
    ------
    ValueError
        If blocks of different budgets are open in several threads.
    """
    own = context_budget()
    if own is not None:
        return own
    with _OPEN_LOCK:
        innermost = [stack[-1] for stack in _OPEN.values() if stack]
    distinct = [b for i, b in enumerate(innermost) if all(b is not c for c in innermost[:i])]
    if len(distinct) > 1:
        raise ValueError(
            f"budget: {len(distinct)} different `with budget:` blocks are open in other "
            "threads, and a fit in this thread cannot tell which one it belongs to; pass "
            "budget= to the estimator"
        )
    return distinct[0] if distinct else None

"""The budgets entered with ``with budget:``, visible only where the block was opened.

Each context (thread, asyncio task) keeps its own stack of entered budgets in a
``contextvars.ContextVar``; the innermost one is the default of the estimators created and
fitted there. A block is visible only in the thread that opened it (and in the asyncio
tasks created inside it, which copy the context): a new thread, even one started inside
the block, starts from an empty context. A fit in another thread is therefore never
charged to a block it did not open, whose owner could not tell it was spent; it charges
``budget=`` when given, else the budget its estimator was created under (an estimator
created inside a block remembers it, also through ``clone``), else a budget of its own
recorded in the process-wide default ledger (``privacy.default_ledger``).
"""

import contextvars

_ACTIVE = contextvars.ContextVar("geomstats_dp_active_budgets", default=())


def enter(budget):
    """Record that ``with budget:`` was entered in the current context."""
    _ACTIVE.set(_ACTIVE.get() + (budget,))


def leave(budget):
    """Record that the innermost ``with budget:`` block of ``budget`` was left."""
    active = _ACTIVE.get()
    if active and active[-1] is budget:
        _ACTIVE.set(active[:-1])


def context_budget():
    """The innermost budget entered in this context, or None."""
    active = _ACTIVE.get()
    return active[-1] if active else None

"""The error and the warning that the privacy layer raises."""


class BudgetExceededError(ValueError):
    """A planned release would spend more than its privacy budget; nothing was charged.

    Attributes
    ----------
    required_epsilon : float
        Epsilon of the ledger composed with the planned events, at the budget's delta.
    budget_epsilon : float
        Total epsilon of the budget.
    delta : float
        The budget's delta.
    """

    def __init__(self, message, required_epsilon, budget_epsilon, delta):
        super().__init__(message)
        self.required_epsilon = required_epsilon
        self.budget_epsilon = budget_epsilon
        self.delta = delta


class PrivacyLeakWarning(UserWarning):
    """A release or a computation that no privacy guarantee covers.

    Raised, for instance, when a loss is evaluated on the raw data, or when a bound that the
    guarantee needs (clip norm, data radius) was inferred from the data.
    """


class DetachedBudgetError(RuntimeError):
    """A budget that is an unpickled copy was asked to check or spend.

    A pickled budget (sent to another process, for instance a joblib/loky worker) is an
    independent copy of the ledger: charges to it would be lost to the original. Nothing is
    charged; ``PrivacyBudget.resume()`` makes a live budget of the copy deliberately.
    """

"""What a fit shows besides its release: compared between neighbouring datasets."""

import warnings


def public_outputs(estimator, *fit_args):
    """Fit ``estimator`` and return every public output but the release.

    Returns
    -------
    public : dict
        The fitted attributes other than ``estimate_`` and ``budget_``, the warnings
        (category, message) and the epsilon spent.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(*fit_args)
    public = {name: getattr(estimator, name) for name in estimator._FITTED
              if name not in ("estimate_", "budget_")}
    public["warnings"] = [(w.category, str(w.message)) for w in caught]
    public["spent"] = estimator.budget_.spent_epsilon
    return public

"""What every private estimator shares with scikit-learn: parameters, budget, fitted state."""

import functools

from sklearn.base import BaseEstimator
from sklearn.utils import TransformerTags
from sklearn.utils._param_validation import make_constraint

from geomstats_dp._dask import is_dask_array
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.privacy import current_budget, resolve_budget


class PrivateEstimator(BaseEstimator):
    """Base of the private estimators: the budget they charge and their fitted attributes.

    Subclasses end ``__init__`` with ``self._remember_budget()``, list their fitted
    attribute names in ``_FITTED``, and in ``fit`` check their parameters, call
    ``self._start_fit()`` (it clears the fitted attributes, so that a failed fit leaves
    the estimator unfitted, and returns the budget to charge), build their mechanism
    from public quantities and hand it to ``self._fit_release``.

    The budget active (``with budget:``) when the estimator is created is remembered, and
    travels with ``sklearn.base.clone``: a clone made outside the block still charges it.
    """

    _FITTED = ()

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names, read from ``__init__``'s signature once a
        class (``get_params``, ``clone`` and the parameter validation ask for them on
        every fit)."""
        return list(_param_names(cls))

    def _validate_params(self):
        """scikit-learn's check of each parameter against ``_parameter_constraints``,
        with the constraint objects built once a class: a value that meets one of its
        constraints passes; any other goes through scikit-learn's check, which raises."""
        params = self.get_params(deep=False)
        if not all(any(constraint.is_satisfied_by(params[name]) for constraint in made)
                   for name, made in _constraints(type(self)) if name in params):
            super()._validate_params()

    def _remember_budget(self):
        """Record the budget active now (``with budget:``), the default of ``fit``."""
        self._creation_budget = current_budget()

    def __sklearn_clone__(self):
        """Clone the parameters and keep the budget this estimator was created under."""
        from sklearn.base import _clone_parametrized

        clone = _clone_parametrized(self)
        clone._creation_budget = self.__dict__.get("_creation_budget")
        return clone

    def __sklearn_tags__(self):
        """scikit-learn's tags; an estimator with ``transform`` is a transformer."""
        tags = super().__sklearn_tags__()
        if hasattr(self, "transform") and tags.transformer_tags is None:
            tags.transformer_tags = TransformerTags()
        return tags

    def _check_data(self, X, y=None):
        """Raise the error ``fit`` raises on a value of (X, y) it refuses (none here;
        estimators that refuse values override it). The private search checks its whole
        data with it before any run."""

    def _start_fit(self, epsilon, delta):
        """Clear the fitted attributes; return the budget this fit charges."""
        for name in self._FITTED:
            self.__dict__.pop(name, None)
        return resolve_budget(
            self.budget or self.__dict__.get("_creation_budget"), epsilon, delta
        )

    def _finish(self, fitted):
        """Post-process the mechanism's fitted attributes (released quantities only)."""
        return fitted

    def _fit_release(self, budget, method, mechanism, data, weights):
        """Run ``mechanism`` through ``run_release`` and set the fitted attributes.

        Parameters
        ----------
        budget : PrivacyBudget
        method : str
            The method run, recorded as ``method_``.
        mechanism : Mechanism
        data : array-like
            Shape-checked records (a Dask array for a mechanism that ``reads_dask``).
        weights : numpy.ndarray or None

        Returns
        -------
        self
        """
        if is_dask_array(data) and not mechanism.reads_dask:
            raise TypeError(
                f"method={method!r} does not read Dask arrays; pass X in memory "
                "(X.compute()) or a method that does (the Dask page of the docs)"
            )
        fitted = run_release(mechanism, budget, data, weights, self.random_state,
                             self.secure)
        # the mechanism's declarations, for the conformance checks (geomstats_dp.testing)
        self._released_outputs = mechanism.released_outputs
        self._skippable_events = mechanism.skippable_events()
        return self._set_fitted(self._finish(fitted), budget_=budget, method_=method)

    def _set_fitted(self, fitted, **public):
        """Set the released attributes ``fitted`` and the public ones; return self."""
        for name, value in {**fitted, **public}.items():
            setattr(self, name, value)
        return self


@functools.cache
def _param_names(cls):
    return tuple(super(PrivateEstimator, cls)._get_param_names())


@functools.cache
def _constraints(cls):
    return tuple((name, tuple(make_constraint(constraint) for constraint in constraints))
                 for name, constraints in cls._parameter_constraints.items()
                 if constraints != "no_validation")

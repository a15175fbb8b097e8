"""Conformance checks of private estimators, in the spirit of scikit-learn's
``check_estimator``.

``check_private_estimator(estimator, X, y)`` runs every check on one estimator (one
method) and its data; ``mechanism_case(mechanism, X, y)`` wraps a mechanism spec built
alone (``MechanismEstimator``) so that every check runs on it; ``parametrize_private_checks(cases)`` makes one pytest test of
each (case, check) pair. Each check states its property in its docstring and raises
AssertionError, naming what failed, when the estimator breaks it. The package's own
estimators and methods are ``built_in_cases()``; the docs' testing page shows how to run
the checks on a user's estimator.
"""

import functools
import inspect

from geomstats_dp.testing._accounting import check_ledger_composition
from geomstats_dp.testing._audit import check_audit, halved_noise
from geomstats_dp.testing._case import Case
from geomstats_dp.testing._cases import built_in_cases
from geomstats_dp.testing._convergence import check_convergence
from geomstats_dp.testing._domain import check_input_domain
from geomstats_dp.testing._mechanism import MechanismEstimator, mechanism_case
from geomstats_dp.testing._neighbours import adjacency, worst_case_neighbours
from geomstats_dp.testing._noise import check_noise_drawn
from geomstats_dp.testing._observables import check_public_observables, public_outputs
from geomstats_dp.testing._reservation import check_failed_release_cancels
from geomstats_dp.testing._sensitivity import check_stage_sensitivity
from geomstats_dp.testing._touched import check_touched_stages

# every check, in the order they run
CHECKS = (
    check_public_observables,
    check_input_domain,
    check_failed_release_cancels,
    check_noise_drawn,
    check_stage_sensitivity,
    check_ledger_composition,
    check_touched_stages,
    check_convergence,
    check_audit,
)
# statistically heavy, or a fit per record: marked slow in pytest
SLOW_CHECKS = frozenset({"check_audit", "check_touched_stages"})


def _audit_on_a_neighbour(estimator, X, y=None):
    """``check_audit`` between (X, y) and its worst-case neighbour with a record far
    outside the bound (the first neighbour where there is none)."""
    neighbours = {name: (X2, y2) for name, X2, y2 in worst_case_neighbours(estimator, X, y)}
    name = next((name for name in neighbours if name.endswith("far")), next(iter(neighbours)))
    X2, y2 = neighbours[name]
    return check_audit(estimator, X, X2, y, y2)


def private_checks(X, y=None, *, reference=None, distance=None, tolerance=1e-2,
                   predict=None, options=None, checks=None, skip=()):
    """The checks to run on an estimator fitted on (X, y), each bound to the data.

    Parameters
    ----------
    X, y : array-like
        Small public data the estimator fits.
    reference, distance, tolerance
        Of ``check_convergence`` (left out when ``reference`` is None).
    predict : array-like, optional
        Features to predict on after each fit, for the checks of releases made at predict
        time (structured prediction per row).
    options : dict, optional
        Check name -> keyword arguments given to that check.
    checks : collection of str, optional
        Names of the checks to run; default all.
    skip : collection of str
        Names of checks not to run.

    Returns
    -------
    checks : list of (str, callable)
        ``(name, check)``; ``check(estimator)`` runs it.
    """
    bound = []
    for check in CHECKS:
        name = check.__name__
        if (checks is not None and name not in checks) or name in skip:
            continue
        if name == "check_convergence":
            if reference is None:
                continue
            check = functools.partial(check, reference=reference, distance=distance,
                                      tolerance=tolerance)
        elif name == "check_audit":
            check = _audit_on_a_neighbour
        elif predict is not None and "predict" in inspect.signature(check).parameters:
            check = functools.partial(check, predict=predict)
        if options and name in options:
            check = functools.partial(check, **options[name])
        bound.append((name, functools.partial(check, X=X, y=y)))
    return bound


def check_private_estimator(estimator, X, y=None, *, checks=None, skip=(),
                            reference=None, distance=None, tolerance=1e-2, predict=None):
    """Run every conformance check on ``estimator`` fitted on (X, y).

    The checks (each states its property): public observables identical on worst-case
    neighbours, bad input refused clearly or treated per record, a failed release's
    reservation given back, noise drawn equal to the calibrated noise, each stage's
    realised sensitivity within its stated one, the ledger equal to an independent
    composition, convergence at a huge epsilon (with ``reference``) and a black-box
    audit whose broken twin it refutes.

    Parameters
    ----------
    estimator : estimator
        Unfitted, with its method and settings; the checks fit clones of it, each on a
        fresh ``PrivacyBudget`` (``budget`` and ``random_state`` are set by the checks).
    X, y : array-like
        Small data the estimator fits (y: targets, or None).
    checks : collection of str, optional
        The names of the checks to run; default all.
    skip : collection of str
        The names of checks not to run ("check_audit": thousands of fits, and its power
        depends on the neighbour, the statistic and epsilon; ``check_audit`` takes them).
    reference : callable, optional
        ``reference(X, y)``: the non-private answer (``check_convergence``).
    distance : callable, optional
        ``distance(release, answer) -> float`` for ``check_convergence``.
    tolerance : float
        Of ``check_convergence``.
    predict : array-like, optional
        Features to predict on after each fit (releases made at predict time).

    Raises
    ------
    AssertionError
        From the first check that fails, naming it.
    """
    for _, check in private_checks(X, y, reference=reference, distance=distance,
                                   tolerance=tolerance, predict=predict, checks=checks,
                                   skip=skip):
        check(estimator)


def parametrize_private_checks(cases):
    """A pytest ``parametrize`` mark over every (case, check) pair, like scikit-learn's
    ``parametrize_with_checks``.

    Parameters
    ----------
    cases : iterable of Case
        The estimators and their data (``built_in_cases()`` for the package's own).

    Returns
    -------
    mark : pytest.MarkDecorator
        Parametrizes ``estimator`` and ``check`` (call ``check(estimator)``), with ids
        "<case name>-<check name>"; a case's ``expected_failures`` become strict xfails,
        its ``skipped`` checks are left out, and the heavy checks (and every check of a
        slow case) are marked ``slow``.
    """
    import pytest

    params = []
    for case in cases:
        for name, check in private_checks(case.X, case.y, reference=case.reference,
                                          distance=case.distance,
                                          tolerance=case.tolerance, predict=case.predict,
                                          options=case.options, skip=case.skipped):
            marks = [pytest.mark.slow] if case.slow or name in SLOW_CHECKS else []
            if name in case.expected_failures:
                marks.append(pytest.mark.xfail(strict=True,
                                               reason=case.expected_failures[name]))
            params.append(pytest.param(case.estimator, check, marks=marks,
                                       id=f"{case.name}-{name}"))
    return pytest.mark.parametrize("estimator, check", params)


__all__ = [
    "Case",
    "MechanismEstimator",
    "adjacency",
    "built_in_cases",
    "check_audit",
    "check_convergence",
    "check_failed_release_cancels",
    "check_input_domain",
    "check_ledger_composition",
    "check_noise_drawn",
    "check_private_estimator",
    "check_public_observables",
    "check_stage_sensitivity",
    "check_touched_stages",
    "halved_noise",
    "mechanism_case",
    "parametrize_private_checks",
    "private_checks",
    "public_outputs",
    "worst_case_neighbours",
]

"""Every conformance check on every estimator and every method it offers (``_cases``), on
the active backend.

A case's known failure would be a strict xfail naming the finding it shows (``Case``'s
``expected_failures``); there is none.

The accounting checks (the ledger against an independent composition of the stages, and
of the stages one record reaches) run once, on numpy: the stages a fit releases, their
sensitivities and noise are the same public specs on every backend, which the checks of
noise, sensitivities and public observables confirm on each backend.
"""

import pytest

from geomstats_dp.testing import built_in_cases, parametrize_private_checks
from tests.conftest import shifted

STATISTICAL = ("check_noise_drawn",)  # moment tests: rerun on other draws by --seed-shift
ACCOUNTING = ("check_ledger_composition", "check_touched_stages")  # numpy only
AUDITED = ("thousands of fits a case: every mechanism is audited, with its broken twin "
           "refuted, at settings chosen for power in tests/testing/test_audit.py")


def _cases():
    cases = built_in_cases()
    for case in cases:
        case.skipped["check_audit"] = AUDITED
    return cases


def _accounting_once(mark):
    """``mark`` with the accounting checks marked backend_independent."""
    names, params = mark.args
    params = [pytest.param(*param.values, id=param.id,
                           marks=[*param.marks, pytest.mark.backend_independent])
              if param.id.endswith(ACCOUNTING) else param for param in params]
    return pytest.mark.parametrize(names, params)


@_accounting_once(parametrize_private_checks(_cases()))
def test_private_estimator(estimator, check):
    if getattr(check, "func", check).__name__ in STATISTICAL:
        check(estimator, random_state=shifted(0))
    else:
        check(estimator)

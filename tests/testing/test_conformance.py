"""Every conformance check on every estimator and every method it offers (``_cases``), on
the active backend.

A case's known failure would be a strict xfail naming the finding it shows (``Case``'s
``expected_failures``); there is none.
"""

from geomstats_dp.testing import built_in_cases, parametrize_private_checks
from tests.conftest import shifted

STATISTICAL = ("check_noise_drawn",)  # moment tests: rerun on other draws by --seed-shift
AUDITED = ("thousands of fits a case: every mechanism is audited, with its broken twin "
           "refuted, at settings chosen for power in tests/testing/test_audit.py")


def _cases():
    cases = built_in_cases()
    for case in cases:
        case.skipped["check_audit"] = AUDITED
    return cases


@parametrize_private_checks(_cases())
def test_private_estimator(estimator, check):
    if getattr(check, "func", check).__name__ in STATISTICAL:
        check(estimator, random_state=shifted(0))
    else:
        check(estimator)

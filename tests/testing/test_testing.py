"""The harness's entry points (``geomstats_dp.testing``): which checks ``private_checks``
binds, ``check_private_estimator`` stopping at the first failure, and the pytest
parameters of ``parametrize_private_checks``. The checks are replaced by stubs that record
their calls; the real checks are tested in the files named after their modules."""

import pytest

import geomstats_dp.testing as harness
from geomstats_dp.testing import Case


def _stub(name, calls, fail=False):
    def check(estimator, X, y=None, **options):
        calls.append((name, estimator, X, y, options))
        if fail:
            raise AssertionError(f"{name} failed")

    check.__name__ = name
    return check


@pytest.fixture
def calls(monkeypatch):
    recorded = []
    names = ("check_public_observables", "check_input_domain", "check_convergence")
    monkeypatch.setattr(harness, "CHECKS", tuple(_stub(name, recorded) for name in names))
    return recorded


@pytest.mark.backend_independent
def test_private_checks_binds_the_data_and_selects_by_name(calls):
    def reference(X, y):
        return 0.0

    bound = harness.private_checks("X", "y", reference=reference, tolerance=0.5,
                                   options={"check_input_domain": {"extra": 1}})
    assert [name for name, _ in bound] == [
        "check_public_observables", "check_input_domain", "check_convergence"]
    for _, check in bound:
        check("estimator")
    assert calls[1] == ("check_input_domain", "estimator", "X", "y", {"extra": 1})
    assert calls[2][4] == {"reference": reference, "distance": None, "tolerance": 0.5}
    # convergence needs a reference; checks= and skip= select by name
    assert [name for name, _ in harness.private_checks("X")] == [
        "check_public_observables", "check_input_domain"]
    assert [name for name, _ in harness.private_checks(
        "X", checks={"check_input_domain", "check_public_observables"},
        skip={"check_public_observables"})] == ["check_input_domain"]


@pytest.mark.backend_independent
def test_check_private_estimator_stops_at_the_first_failure(monkeypatch):
    recorded = []
    monkeypatch.setattr(harness, "CHECKS", (
        _stub("check_public_observables", recorded),
        _stub("check_input_domain", recorded, fail=True),
        _stub("check_noise_drawn", recorded)))
    with pytest.raises(AssertionError, match="check_input_domain failed"):
        harness.check_private_estimator("estimator", "X")
    assert [call[0] for call in recorded] == ["check_public_observables", "check_input_domain"]


@pytest.mark.backend_independent
def test_parametrize_gives_one_test_per_case_and_check_with_marks(calls):
    cases = [
        Case("plain", "estimator", "X", sampled=False,
             expected_failures={"check_input_domain": "issue 0: a finding"},
             skipped={"check_public_observables": "covered elsewhere"}),
        Case("heavy", "other", "X2", sampled=False, slow=True),
    ]
    mark = harness.parametrize_private_checks(cases)
    argnames, params = mark.args
    assert argnames == "estimator, check"
    assert [param.id for param in params] == [
        "plain-check_input_domain", "heavy-check_public_observables",
        "heavy-check_input_domain"]
    xfail = [m for m in params[0].marks if m.name == "xfail"]
    assert xfail and xfail[0].kwargs == {"strict": True, "reason": "issue 0: a finding"}
    assert all(any(m.name == "slow" for m in param.marks) for param in params[1:])
    estimator, check = params[2].values
    check(estimator)
    assert calls[-1][:4] == ("check_input_domain", "other", "X2", None)

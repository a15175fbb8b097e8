"""Privacy accounting: budgets and ledgers, accountants, noise calibration, audits.

Conventions: adjacency is replace-one unless an event says otherwise; a Gaussian event's
noise multiplier is the noise standard deviation of one step divided by the sensitivity of
that step's query (2C/n for a mean of n gradients clipped to C). See docs/privacy.md.
"""

from geomstats_dp.privacy._exceptions import (
    BudgetExceededError,
    DetachedBudgetError,
    PrivacyLeakWarning,
)
from geomstats_dp.privacy.accountant import Guarantee, compose, compose_epsilon
from geomstats_dp.privacy.audit import (
    AuditResult,
    audit,
    distance_statistic,
    log_coordinate_statistic,
)
from geomstats_dp.privacy.budget import PrivacyBudget, current_budget
from geomstats_dp.privacy.calibration import calibrate_gaussian, share_noise_multipliers
from geomstats_dp.privacy.default_ledger import (
    UnboundedLedger,
    get_default_budget,
    resolve_budget,
    set_default_budget,
)
from geomstats_dp.privacy.events import (
    ApproxDPEvent,
    GaussianEvent,
    PureEvent,
    SelectionEvent,
)
from geomstats_dp.privacy.federated import (
    FederatedGuarantee,
    optimal_composition_epsilon,
    prirfed_epsilon,
    prirfed_public_sampling,
    prirfed_theorem_4_2,
)
from geomstats_dp.privacy.gaussian_dp import (
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    share_epsilon,
)
from geomstats_dp.privacy.pld import pld_epsilon
from geomstats_dp.privacy.svrg import (
    SVRGCalibration,
    calibrate_svrg,
    svrg_epsilon,
    svrg_events,
)

__all__ = [
    "ApproxDPEvent",
    "AuditResult",
    "BudgetExceededError",
    "DetachedBudgetError",
    "FederatedGuarantee",
    "GaussianEvent",
    "Guarantee",
    "PrivacyBudget",
    "PrivacyLeakWarning",
    "PureEvent",
    "SVRGCalibration",
    "SelectionEvent",
    "UnboundedLedger",
    "audit",
    "calibrate_gaussian",
    "calibrate_svrg",
    "compose",
    "compose_epsilon",
    "current_budget",
    "distance_statistic",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "get_default_budget",
    "log_coordinate_statistic",
    "optimal_composition_epsilon",
    "pld_epsilon",
    "prirfed_epsilon",
    "prirfed_public_sampling",
    "prirfed_theorem_4_2",
    "resolve_budget",
    "set_default_budget",
    "share_epsilon",
    "share_noise_multipliers",
    "svrg_epsilon",
    "svrg_events",
]

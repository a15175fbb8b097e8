"""Optional tighter accountant: privacy-loss distributions through dp-accounting.

dp-accounting is a test/optional dependency; it is imported only when this accountant is
used. Covered events, each by a published dominating-pair theorem:

- full-batch Gaussian steps: the Gaussian mechanism's PLD is exact (Dong, Roth & Su 2022);
  its noise multiplier is relative to the ledger's own adjacency, so it is built as a
  sensitivity-one Gaussian (add/remove in dp-accounting's vocabulary, which does not
  change the curve);
- Poisson-subsampled Gaussian steps under add/remove adjacency: the dominating pair of Zhu,
  Dong & Wang (2022, Thm. 11), the PLD of Koskela, Jalko & Honkela (2020);
- pure epsilon-DP releases: the dominating pair of (epsilon, 0)-DP (randomized response,
  Kairouz, Oh & Viswanath 2015).

Sampling without replacement under replace-one adjacency is refused: dp-accounting 0.6 is
inconsistent there (its PLD accountant doubles the sensitivity while its RDP accountant does
not), so it cannot serve as a check of that scheme.
"""

from geomstats_dp.privacy.events import GaussianEvent


def _import_pld():
    try:
        from dp_accounting.pld import common, privacy_loss_distribution
    except ImportError as error:
        raise ImportError(
            "the PLD accountant needs the optional package dp-accounting "
            "(pip install 'dp-accounting==0.6.0', or the project's [test] extra); "
            "compose_epsilon(method='auto') works without it"
        ) from error
    return common, privacy_loss_distribution


def pld_epsilon(events, delta, value_discretization_interval=1e-4):
    """Epsilon at ``delta`` of a ledger by composing privacy-loss distributions.

    Parameters
    ----------
    events : tuple of GaussianEvent or PureEvent
        Full-batch Gaussian, Poisson-subsampled Gaussian (add/remove) and pure events.
    delta : float
        In (0, 1).
    value_discretization_interval : float
        Grid step of the privacy-loss values; dp-accounting's pessimistic discretisation
        keeps the result an upper bound.

    Returns
    -------
    epsilon : float

    Raises
    ------
    ImportError
        If dp-accounting is not installed.
    ValueError
        For an event sampled without replacement.
    """
    common, pld_module = _import_pld()
    total = pld_module.identity(value_discretization_interval=value_discretization_interval)
    for index, event in enumerate(events):
        total = total.compose(
            _event_pld(event, index, common, pld_module, value_discretization_interval)
        )
    return float(max(total.get_epsilon_for_delta(delta), 0.0))


def _event_pld(event, index, common, pld_module, interval):
    if not isinstance(event, GaussianEvent):
        parameters = common.DifferentialPrivacyParameters(event.epsilon, 0.0)
        return pld_module.from_privacy_parameters(
            parameters, value_discretization_interval=interval
        )
    if not event.subsampled:
        return pld_module.from_gaussian_mechanism(
            standard_deviation=event.noise_multiplier / event.n_steps**0.5,
            value_discretization_interval=interval,
        )
    if event.sampling != "poisson":
        raise ValueError(
            f"events[{index}] is sampled without replacement (replace-one); the PLD "
            "accountant covers full-batch and Poisson-subsampled (add/remove) events only"
        )
    return pld_module.from_gaussian_mechanism(
        standard_deviation=event.noise_multiplier,
        sampling_prob=event.sampling_rate,
        value_discretization_interval=interval,
    ).self_compose(event.n_steps)

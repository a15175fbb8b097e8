"""The calibration of a PriRFed run: the agents' local plans meet the accountant's total.

From public quantities only (the agents' sizes, the resolved settings, epsilon, delta, the
accountant, the batch size and step size, the dimension). With the accountants of
``privacy.federated`` the agents' local (epsilon, delta) comes from the accountant's
inverse; with "end_to_end" (``privacy.federated_e2e``) it is the parameter of the agents'
noise, found by bisection on the composed run.
"""

import dataclasses
from typing import Any

from geomstats_dp.federated.local_methods import LOCAL_METHODS
from geomstats_dp.learning import default_batch_size
from geomstats_dp.privacy import ApproxDPEvent
from geomstats_dp.privacy.federated import FederatedGuarantee, local_target
from geomstats_dp.privacy.federated_e2e import (
    end_to_end_local_target,
    prirfed_end_to_end_epsilon,
)


@dataclasses.dataclass(frozen=True)
class Calibration:
    """The public parameters a PriRFed run is calibrated from.

    Attributes
    ----------
    epsilon, delta : float
        The run's total guarantee.
    accountant : str
        One of ``PriRFed``'s accountants.
    dim : int
        The manifold's dimension.
    batch_size : int or None
        The user's DP-RSGD batch size (None: the default for the smallest agent).
    step_size : float, callable or None
        The user's local step size.
    """

    epsilon: float
    delta: float
    accountant: str
    dim: int
    batch_size: Any = None
    step_size: Any = None

    def agents_batch_size(self, sizes):
        """The agents' DP-RSGD batch size: the user's, or the default for the smallest."""
        return self.batch_size or default_batch_size(min(sizes))

    def plan(self, settings, local_epsilon, local_delta, size, clip_norm, batch_size):
        """One agent's calibrated plan and step size (``federated.local_methods``)."""
        return LOCAL_METHODS[settings.local_method].plan(
            local_epsilon, local_delta, size, settings.local_steps, clip_norm, batch_size,
            self.dim, self.step_size)

    def agent_events(self, settings, local_epsilon, local_delta, sizes):
        """The local events of each distinct agent size, smallest first, at clip norm 1
        (the noise multipliers do not depend on C)."""
        batch_size = self.agents_batch_size(sizes)
        return [self.plan(settings, local_epsilon, local_delta, size, 1.0, batch_size)[0].events
                for size in sorted(set(sizes))]

    def local_target(self, sizes, settings):
        """(local epsilon, local delta, total guarantee), after the batch-size check.

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes.
        settings : RunSettings

        Returns
        -------
        local_epsilon, local_delta : float
        guarantee : FederatedGuarantee
        """
        batch_size = self.agents_batch_size(sizes)
        if settings.local_method == "rsgd" and batch_size > min(sizes):
            raise ValueError(
                f"batch_size must be <= the smallest agent's size {min(sizes)}, got {batch_size}"
            )
        if self.accountant != "end_to_end":
            return local_target(self.epsilon, self.delta, len(sizes), settings.n_sampled,
                                settings.n_rounds, self.accountant)
        return self._end_to_end_target(sizes, settings)

    def _end_to_end_target(self, sizes, settings):
        """The end-to-end accountant (public sampling) calibrated through the local plans."""

        def events_of(local_epsilon):
            return self.agent_events(settings, local_epsilon, self.delta, sizes)

        setting = (len(sizes), settings.n_sampled, settings.n_rounds)
        local_epsilon, total = end_to_end_local_target(events_of, self.epsilon, self.delta,
                                                       *setting)
        round_epsilon = max(prirfed_end_to_end_epsilon(events, *setting[:2], 1, self.delta)
                            for events in events_of(local_epsilon))
        return local_epsilon, self.delta, FederatedGuarantee(
            total, self.delta, round_epsilon, self.delta, "end_to_end")

    def event(self, guarantee, settings):
        """The run's one event: the accountant's total."""
        return ApproxDPEvent(guarantee.epsilon, guarantee.delta,
                             label=f"PriRFed ({self.accountant}, {settings.local_method})")

    def record_ledgers(self, sizes, settings):
        """RDP ledgers that bound one record's privacy loss in a run on agents of ``sizes``.

        A record is seen only by its own agent, in at most each of the T rounds, by the
        agent's local Gaussian releases: the T-fold composition of the agent's local events
        (exact with every agent sampled; an upper bound with fewer, for every accountant,
        since RDP is a supremum over neighbours and over the public participations). The
        noise multipliers do not depend on C, which is not stated.

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes n_i.
        settings : RunSettings

        Returns
        -------
        ledgers : tuple of tuple of GaussianEvent
            One per distinct agent plan; a record's RDP at each order is the largest of
            them.
        """
        local_epsilon, local_delta = self.local_target(sizes, settings)[:2]
        return tuple(dict.fromkeys(  # one ledger per distinct plan
            tuple(dataclasses.replace(event, n_steps=event.n_steps * settings.n_rounds,
                                      sensitivity=None, noise_std=None,
                                      label=f"PriRFed record, {settings.n_rounds} rounds")
                  for event in events)
            for events in self.agent_events(settings, local_epsilon, local_delta, sizes)
        ))

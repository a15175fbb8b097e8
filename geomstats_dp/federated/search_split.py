"""The private search over PriRFed: each agent's records split, a federated private score.

``PrivateGridSearchCV(PriRFed(...), ...).fit(agents)`` reaches PriRFed through the split
protocol of ``geomstats_dp.model_selection.splits`` (``PriRFed._search_split``): the search
stays below the federated layer and this module, above it, holds what is federated.

- **Split**: each agent's records are split into a training and a validation part by the
  search's public randomness (``RecordSplit`` per agent, n_val_i = max(1, round(f n_i))),
  so the parts' sizes are public, as PriRFed treats the agents' sizes. A run is a full
  PriRFed fit on the agents' training parts; the refit, on the agents' full data.
- **Score** (record-level, replace-one adjacency within an agent, as PriRFed): agent i
  computes S_i, the sum of its validation records' losses at the released point clipped to
  [0, B] (a non-finite loss counts as B), and adds its own noise of the score's mechanism
  (``model_selection.scores``) to S_i / n_val, n_val = sum_i n_val_i, before sending it:
  the noise is added at the agents, where PriRFed adds its noise, because the server is
  not trusted (PriRFed's "end_to_end" guarantee holds against it). Replacing one record
  changes one agent's S_i by at most B: each agent's release has sensitivity B / n_val,
  and a record is in one agent's release only (parallel composition), so the score is one
  event of that sensitivity (Laplace of scale (B / n_val) / epsilon_run, or Gaussian
  calibrated to (epsilon_run, delta)). The server releases the sum, minus it as the score;
  its noise is the sum of N agents' draws (variance N times one agent's).
- **Run's privacy**: a record is seen only by its agent, in at most every one of the T
  rounds, by its K local Gaussian releases; the SelectionEvent bounds a run by
  ``PriRFed.record_ledgers`` (the T-fold composition of the agent's local events: exact
  with every agent sampled, an upper bound otherwise and for every accountant), the
  largest over agents at each order. The whole search is one SelectionEvent (Papernot &
  Steinke 2022); the refit is PriRFed's own event, at ``refit_fraction`` of delta.
- **Score on its own**: ``private_score(prirfed, agents, ...)`` scores a fitted PriRFed
  on a federation of validation records (``AgentSplit.held_out``: every record held out,
  n_val the total) by the same agents' releases, charged as one event of sensitivity
  B / n_val at the score's epsilon, checked before any value is read.
"""

import numpy as np

from geomstats_dp.model_selection.clipping import clipped_losses
from geomstats_dp.model_selection.planning import planned_events
from geomstats_dp.model_selection.splits import RecordSplit, score_stage
from geomstats_dp.privacy.stages import stage_group


class AgentSplit:
    """Each agent's records split into training and validation parts (search protocol).

    Parameters
    ----------
    X : list of array-like, each shape=[n_i, ...]
        The agents' records.
    y : None
        PriRFed takes no targets.
    validation_fraction : float
        In (0, 1), the share of each agent's records in its validation part.
    rng : numpy.random.Generator or SecureGenerator
        The search's; one ``random()`` per record, agent after agent (public).
    """

    def __init__(self, X, y, validation_fraction, rng):
        self._keep([RecordSplit(records, None, validation_fraction, rng, name)
                    for records, name in _agents(X, y)])
        self.train_sizes = [len(agent.train) for agent in self.agents]

    @classmethod
    def held_out(cls, X, y=None):
        """Every record of every agent in the validation parts: the federation a fitted
        PriRFed is scored on by ``private_score`` (the score of the module notes, the
        agents adding their noise). Reads the shapes only.

        Parameters
        ----------
        X : list of array-like, each shape=[n_i, ...]
        y : None

        Returns
        -------
        split : AgentSplit
        """
        split = cls.__new__(cls)
        split._keep([RecordSplit.held_out(records, None, name) for records, name in _agents(X, y)])
        return split

    def _keep(self, agents):
        """Keep the agents' splits; n_val, the public total of their validation parts."""
        self.agents = agents
        self.n_validation = sum(agent.n_validation for agent in agents)

    def run_cost(self, estimator):
        """(PriRFed's charged event, one record's RDP ledgers, one per agent plan)."""
        charged = planned_events(self.run, estimator)
        return charged, estimator.record_ledgers(self.train_sizes)

    def run(self, estimator):
        """Fit PriRFed on the agents' training parts; each agent's validation losses."""
        estimator.fit([agent.part(agent.train)[0] for agent in self.agents])
        return self.validation_losses(estimator)

    def validation_losses(self, estimator):
        """Each agent's per-record losses of the fitted PriRFed on its validation part."""
        return [agent.validation_losses(estimator) for agent in self.agents]

    def noisy_loss(self, losses, loss_bound, mechanism, event, rng):
        """Sum over agents of S_i / n_val plus agent i's own draw of the score's noise
        (agent i's stage, in its group)."""
        total = 0
        for index, agent_losses in enumerate(losses):
            with stage_group(f"agent {index}"):
                total += score_stage(clipped_losses(agent_losses, loss_bound).sum()
                                     / self.n_validation, mechanism.noise(event, rng),
                                     event)
        return total

    def fit_all(self, estimator):
        """Fit PriRFed on every agent's records."""
        estimator.fit([agent.X for agent in self.agents])


def _agents(X, y):
    """(records, name) of each agent of the federation X, after the checks of its type."""
    if y is not None:
        raise ValueError("y must be None for PriRFed (its records have no targets)")
    if isinstance(X, np.ndarray) or not hasattr(X, "__len__") or len(X) == 0:
        raise TypeError("X must be a non-empty list of the agents' record arrays")
    return [(records, f"X[{index}] (agent {index})") for index, records in enumerate(X)]

"""PrivateGridSearchCV and PrivateRandomizedSearchCV: hyperparameters chosen privately.

Privacy. Adjacency: replace-one over the whole dataset (n public). A seeded random split
of the indices (public) gives a training and a validation part. One run draws a candidate
uniformly at random, fits it on the training part at the per-run epsilon (the estimator's
own mechanism, sensitivity and accountant) and releases a private score on the validation
part (``scores``: the clipped mean loss, sensitivity B / n_validation). The search makes K
runs, K drawn from a Poisson (the default) or truncated negative binomial law
and never published, and releases only the best run: its candidate, its score and its
fitted estimator. The whole search is one ``SelectionEvent`` in the ledger, accounted by
Papernot & Steinke (2022, Thms. 2 and 6) on the RDP curves of the runs' events. The refit
on all data (``refit=True``) is the estimator's own release, charged as its own events.

Time. The bound needs K hidden, and a search making K runs takes a time that grows with K.
By default (``max_runs="auto"``) every search makes the same public number of runs k_max,
the smallest with P[K > k_max] <= delta / (100 (1 + e^epsilon)), and releases the best of
the first min(K, k_max): time then depends on k_max only, assuming a run's time reveals
nothing private. The accountant adds (1 + e^epsilon) P[K > k_max] to delta
(``geomstats_dp.privacy.selection``). It costs k_max / E[K] times the runs of K.

PriRFed (a list of agents' datasets) is searched through the split protocol
(``splits``): each agent's records are split, the score is each agent's clipped loss sum
with the agent's own noise, summed by the server, under PriRFed's record-level
replace-one adjacency within an agent (``geomstats_dp.federated.search_split``).
"""

from numbers import Integral
from typing import ClassVar

from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils._param_validation import Interval

from geomstats_dp.model_selection._search import MAX_CANDIDATES, BasePrivateSearchCV


class PrivateGridSearchCV(BasePrivateSearchCV):
    """Choose a candidate of a parameter grid privately.

    Privacy. Adjacency: replace-one over the whole dataset (n public). Each run fits a
    uniformly random candidate on the training part (its own mechanism, sensitivity and
    accountant) and releases its score on the validation part: the clipped mean loss,
    sensitivity ``loss_bound`` / n_validation, Laplace or Gaussian noise (``scores``). The
    best of K runs (K random, never published) is one ``SelectionEvent``, accounted by
    Papernot & Steinke (2022) on the runs' RDP curves; the refit is charged as its own
    events. Details in the module notes.

    Parameters
    ----------
    estimator : estimator of geomstats_dp
        PrivateFrechetMean, PrivateERM, PrivatePCA, PrivateMatrixCompletion,
        PrivateStructuredPrediction or PriRFed (any estimator with ``epsilon``, ``delta``,
        ``budget`` and ``random_state`` parameters that checks its whole release before
        reading data). It is cloned; its own epsilon and delta are replaced by the
        search's (a refit that charges an (epsilon, delta) event, PriRFed's, is fitted at
        ``refit_fraction`` delta).
    param_grid : dict or list of dict
        As scikit-learn's ``ParameterGrid``; public; at most ``MAX_CANDIDATES`` (1000)
        candidates.
    epsilon : float
        What the search and the refit cost together, > 0.
    delta : float
        In (0, 1); the delta at which every epsilon of the search is stated.
    loss_bound : float or None
        B, the public bound the per-record validation losses are clipped to. None: the
        bound the space gives (``validation_losses.default_loss_bound``: pi^2 for the
        squared distance of a prediction on a sphere, pi^2 / 2 for a mean's d^2 / 2 there,
        1 for a 0-1 loss); required where it gives none.
    runs : {"poisson", "logarithmic", "geometric"} or float
        The law of the number of runs K: Poisson (K may be 0, with probability
        e^-E[K]: the first candidate is then returned, with ``best_score_`` NaN), or
        truncated negative binomial of shape 0 (logarithmic), 1 (geometric) or the given
        shape >= 0.
    mean_runs : float, optional
        E[K] >= 1; default twice the number m of candidates (under the Poisson law a given
        candidate is then never tried with probability e^-2; the logarithmic law of mean m
        misses it with probability 0.58 for m = 10).
    validation_fraction : float
        Share of the records in the validation part, in (0, 1).
    refit : bool
        Refit the chosen candidate on all the data (its own ledger events) at the largest
        epsilon the remaining budget allows; False: ``best_estimator_`` is the best run's
        estimator, fitted on the training part (covered by the SelectionEvent).
    refit_fraction : float
        With ``refit``: the search is calibrated to cost (1 - refit_fraction) epsilon
        alone; the refit gets what is left of epsilon (composition is not additive).
    score_method : {"laplace", "gaussian"}
        The noise of the private score (``geomstats_dp.model_selection.scores``):
        "laplace", a discrete Laplace on a public grid (floating-point safe, exactly
        epsilon-DP); "gaussian", float Gaussian noise, or a discrete Gaussian on the grid
        when the estimator has ``secure=True``.
    max_runs : "auto", int or None
        The public number of runs k_max every search makes (the best of the first
        min(K, k_max) is released; module notes): "auto" gives the smallest with
        P[K > k_max] <= delta / (100 (1 + e^epsilon)); an integer >= E[K] is taken as is
        (the accountant adds (1 + e^epsilon) P[K > k_max] to delta). None: K runs, and
        the search's time reveals K.
    budget : PrivacyBudget, optional
        Charged; default the active one (``with budget:``), else a fresh budget
        (epsilon, delta) recorded in the default ledger.
    random_state : None, int or numpy.random.Generator
        Draws the split, the candidates of the runs, K, the runs' noise. With an estimator
        made with ``secure=True`` it must be None: every draw of the search then comes from
        the operating system's entropy.

    Attributes
    ----------
    best_index_ : int
        Index of the chosen candidate in ``cv_results_["params"]``.
    best_params_ : dict
    best_score_ : float
        Its private score, scikit-learn's convention (higher is better): MINUS the noisy
        clipped mean validation loss, like scikit-learn's ``neg_mean_squared_error``; NaN
        if K = 0.
    best_loss_ : float
        The same as a loss, ``-best_score_`` (lower is better).
    loss_bound_ : float
        B used (``loss_bound`` or the bound the space gives).
    best_estimator_ : estimator or None
        Refitted on all data (``refit=True``), else the best run's estimator.
    cv_results_ : dict
        Released quantities only: "params" (every candidate, public), "selected" (bool
        array) and "released_score" (the best score, NaN elsewhere). The number of runs
        and the other runs' scores are not released.
    run_epsilon_ : float
        The epsilon each run's fit was calibrated to.
    refit_epsilon_ : float or None
        The refit's epsilon (None without a refit, or when the fit releases nothing).
    events_ : tuple
        The SelectionEvent, then the refit's events.
    budget_ : PrivacyBudget
    n_candidates_ : int
    """

    _parameter_constraints: ClassVar[dict] = {
        **BasePrivateSearchCV._parameter_constraints, "param_grid": [dict, list]}

    def __init__(self, estimator, param_grid, *, epsilon=1.0, delta=1e-5, loss_bound=None,
                 runs="poisson", mean_runs=None, validation_fraction=0.25, refit=True,
                 refit_fraction=0.5, score_method="laplace", max_runs="auto", budget=None,
                 random_state=None):
        super().__init__(
            estimator, epsilon=epsilon, delta=delta, loss_bound=loss_bound, runs=runs,
            mean_runs=mean_runs, validation_fraction=validation_fraction, refit=refit,
            refit_fraction=refit_fraction, score_method=score_method, max_runs=max_runs,
            budget=budget, random_state=random_state,
        )
        self.param_grid = param_grid

    def _candidates(self, rng):
        grid = ParameterGrid(self.param_grid)
        if len(grid) > MAX_CANDIDATES:
            raise ValueError(
                f"param_grid must hold at most {MAX_CANDIDATES} candidates (each is planned "
                f"and tried), got {len(grid)}"
            )
        return list(grid)


class PrivateRandomizedSearchCV(BasePrivateSearchCV):
    """Choose privately among ``n_iter`` candidates drawn from distributions.

    The candidates are drawn first, from ``random_state`` alone (public), then searched
    as a grid (module notes).

    Parameters
    ----------
    estimator : estimator of geomstats_dp
        As in ``PrivateGridSearchCV``.
    param_distributions : dict or list of dict
        As scikit-learn's ``ParameterSampler``: lists or scipy.stats distributions.
    n_iter : int
        Number of candidates drawn, from 1 to ``MAX_CANDIDATES`` (1000).
    epsilon : float
        As in ``PrivateGridSearchCV``, and so are the next parameters.
    delta : float
    loss_bound : float or None
    runs : {"poisson", "logarithmic", "geometric"} or float
    mean_runs : float, optional
    validation_fraction : float
    refit : bool
    refit_fraction : float
    score_method : {"laplace", "gaussian"}
    max_runs : "auto", int or None
    budget : PrivacyBudget, optional
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    best_index_, best_params_, best_score_, best_loss_, best_estimator_, cv_results_,
    run_epsilon_, refit_epsilon_, events_, budget_, n_candidates_, loss_bound_
        As in ``PrivateGridSearchCV``.
    """

    _parameter_constraints: ClassVar[dict] = {
        **BasePrivateSearchCV._parameter_constraints, "param_distributions": [dict, list],
        "n_iter": [Interval(Integral, 1, MAX_CANDIDATES, closed="both")]}

    def __init__(self, estimator, param_distributions, *, n_iter=10, epsilon=1.0,
                 delta=1e-5, loss_bound=None, runs="poisson", mean_runs=None,
                 validation_fraction=0.25, refit=True, refit_fraction=0.5,
                 score_method="laplace", max_runs="auto", budget=None, random_state=None):
        super().__init__(
            estimator, epsilon=epsilon, delta=delta, loss_bound=loss_bound, runs=runs,
            mean_runs=mean_runs, validation_fraction=validation_fraction, refit=refit,
            refit_fraction=refit_fraction, score_method=score_method, max_runs=max_runs,
            budget=budget, random_state=random_state,
        )
        self.param_distributions = param_distributions
        self.n_iter = n_iter

    def _candidates(self, rng):
        seed = int(rng.integers(2**31 - 1))
        return list(ParameterSampler(self.param_distributions, self.n_iter,
                                     random_state=seed))

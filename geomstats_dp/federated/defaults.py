"""PriRFed's ``"auto"`` settings: a public rule from N, the agents' sizes, dim, epsilon, delta.

Nothing here reads a record; the agents' sizes are public (record-level, replace-one
adjacency keeps them). The rule, for the squared distance loss (a federated Frechet mean):

- ``local_method="tangent_mean"`` and ``local_steps=1``: each agent's reply is its noisy
  clipped tangent mean at the broadcast point (the one-shot release, repeated each round);
- ``n_sampled=N``: every agent every round. Sampling fewer agents leaves out whole
  (heterogeneous) agents from a round, and no amplification by agent sampling holds
  against the server, who knows the sampled agents;
- ``n_rounds``: the largest T <= ``MAX_ROUNDS`` at which every agent's expected noise norm
  stays below the clipped signal C and within half the injectivity radius r of the space
  at the start point (where Exp and Log stay inverse: the server reads each reply back
  with Log): sqrt(d) z_T 2C / n_i <= min(C, r / 2), i.e.
  T <= (min(1, r / (2C)) n_min / (2 z_1))^2 / d, with z_T = sqrt(T) z_1 the noise
  multiplier of T full-batch Gaussian releases at the total (epsilon, delta) (exact in
  Gaussian DP), and at least 1. r is geomstats' ``metric.injectivity_radius`` (pi on the
  unit sphere, infinite on SPD matrices with the affine-invariant metric and on hyperbolic
  spaces; infinite where geomstats does not implement it); without a given C (inferred
  from the data, not private) the bound is C alone. Agents' noise beyond r / 2 makes
  averaged rounds worse than one round (docs/federated.md, "Defaults");
- but ``n_rounds=1`` wherever fewer than ``MIN_ROUNDS`` rounds keep every agent's noise
  below C (the bound above without r: (n_min / (2 z_1))^2 / d < MIN_ROUNDS). The average
  of m settled rounds has the noise of one one-shot release times sqrt(T / m), never
  less, and the first round, which travels from the start, does not settle: the rounds
  pay only by removing one-shot averaging's bias at the start, which no public quantity
  bounds, and on a sphere one-shot averaging's noise is even contracted by the curvature
  along a long step. ``MIN_ROUNDS`` was measured on synthetic sphere federations, off
  the baseline benchmark (``benchmarks/federated_round_rule.py``): where 2 or 3 rounds
  fit, the averaged rounds lost to one round on average, where 4 fit they tied, from 5
  on they won;
- ``MAX_ROUNDS = 10``: more rounds do not lower the noise of the average (see below)
  and make each round's point noisier (z_T grows like sqrt(T)), so the replies are read
  further from the data; past about ten rounds the average gained nothing on the
  federations of docs/federated.md ("Defaults", with the measured errors);
- ``output="average"``: the Karcher mean of the round points from the first round whose
  move is within what the noise explains (post-processing of the released points,
  ``run.RunSpec.final_point``). Each round's point is the tangent mean at the previous
  one plus fresh noise of multiplier sqrt(T) z_1, so the average of m of them has the
  noise of one one-shot release times sqrt(T / m) (in a flat space, exactly), while the
  bias of the tangent mean at a far start point is left out with the rounds that still
  moved: with T = 1 the run is one-shot private averaging itself;
- ``output="shrunk"`` instead, when T = 1 and the injectivity radius at the start is
  infinite (SPD matrices with the affine-invariant metric, hyperbolic and Euclidean
  spaces; as above, also where geomstats does not implement it), or where the round's
  aggregated noise norm (``round_noise_norm``) reaches the injectivity radius (a sphere
  at a tiny epsilon: the mean step is then mostly noise longer than pi, and its
  exponential lands anywhere on the sphere, farther from the mean than the start on
  KEEL's movement_libras at epsilon 0.1): the one round's step
  from the start, Log_x0(x_1) = m + e with public noise norm nu
  (``RunSpec.round_noise``), shrunk by max(0, 1 - nu^2 / |Log_x0(x_1)|^2)
  (``aggregation.shrink_step``; post-processing). T = 1 is chosen where the noise
  dominates the agents' clipped means, so the step is mostly noise; the factor reads the
  signal's size from the release itself, because a public factor cannot (the start may
  be near the agents' mean or far from it at the same noise). On the sphere any
  shrinkage towards the start adds to the tangent mean's own shortfall (positive
  curvature), so a finite injectivity radius otherwise keeps ``"average"``; with more rounds
  ``"average"`` removes the noise already, and shrinking every round's step too made it
  worse. The factors compared (James-Stein's, the public ones of DP-RGD's noise-aware
  step) and their measured errors are in docs/benchmarks/baselines.md ("PriRFed").

For any other loss: one round (``n_rounds=1``) of every agent's full local DP-RGD solve
(``local_method="rgd"``, ``local_steps`` the ``PrivateERM`` default for the smallest agent),
i.e. one-shot averaging of local private solves, with ``output="last"``.

With the tangent mean and one local step (the default), each agent replies with its noisy
step, the tangent vector at the broadcast point, rather than the point it leads to
(``reply_kind``): the server averages the vectors as released. On the sphere an agent's
noise can exceed pi (11 agents of 90 records on S^9 at epsilon 0.1: about 3.2 rad), and a
point reply read back with Log is then a different, shorter vector: the average landed
farther from the mean than the public start (docs/benchmarks/baselines.md, "PriRFed").
Where no reply wraps, Log(Exp(v)) = v and both replies give the same release.

An explicit value of a setting is kept; the other settings are resolved around it (the
local steps of a gradient method are its ``PrivateERM`` default divided among the rounds).
"""

import math
from dataclasses import dataclass

from geomstats_dp.learning import default_batch_size, default_n_iter
from geomstats_dp.privacy import calibrate_gaussian

AUTO = "auto"
MAX_ROUNDS = 10  # the rule above; measured in docs/federated.md, "Defaults"
MIN_ROUNDS = 5  # the rule above; measured by benchmarks/federated_round_rule.py


@dataclass(frozen=True)
class RunSettings:
    """The resolved settings of one PriRFed run (the estimator's ``*_`` attributes)."""

    local_method: str
    n_rounds: int
    n_sampled: int
    local_steps: int
    output: str


def tangent_mean_rounds(min_size, dim, epsilon, delta, clip_norm=None,
                        injectivity_radius=math.inf, max_rounds=MAX_ROUNDS,
                        min_rounds=MIN_ROUNDS):
    """The largest T <= ``max_rounds`` with sqrt(d) z_T 2C / n_min <= min(C, r / 2); 1
    where fewer than ``min_rounds`` rounds have sqrt(d) z_T 2C / n_min <= C.

    Parameters
    ----------
    min_size : int
        The smallest agent's size.
    dim : int
        The manifold's dimension d.
    epsilon, delta : float
        The total guarantee of the run.
    clip_norm : float or None
        C (None: the bound is C alone, whatever C).
    injectivity_radius : float
        r at the start point.
    max_rounds, min_rounds : int

    Returns
    -------
    n_rounds : int
        At least 1.
    """
    z_one = calibrate_gaussian(epsilon, delta, 1)

    def fitting(reach):
        return math.floor((reach * min_size / (2.0 * z_one)) ** 2 / dim)

    if fitting(1.0) < min_rounds:
        return 1
    reach = 1.0 if clip_norm is None else min(1.0, injectivity_radius / (2.0 * clip_norm))
    return int(min(max_rounds, max(1, fitting(reach))))


def resolve_settings(params, sizes, dim, squared_distance, injectivity_radius=math.inf):
    """Resolve the ``"auto"`` settings of ``params`` by the public rule of this module.

    Parameters
    ----------
    params : dict
        The estimator's ``local_method``, ``n_rounds``, ``n_sampled``, ``local_steps``,
        ``output``, ``epsilon``, ``delta``, ``clip_norm`` and ``batch_size``.
    sizes : list of int
        The agents' public sizes.
    dim : int
        The manifold's dimension.
    squared_distance : bool
        Whether the loss is the squared distance (federated Frechet mean).
    injectivity_radius : float
        The space's injectivity radius at the start point.

    Returns
    -------
    settings : RunSettings
    """
    def given(name, default):
        value = params[name]
        return default() if isinstance(value, str) and value == AUTO else value

    epsilon, delta, min_size = params["epsilon"], params["delta"], min(sizes)
    method = given("local_method", lambda: "tangent_mean" if squared_distance else "rgd")
    n_rounds = given("n_rounds", lambda: (
        tangent_mean_rounds(min_size, dim, epsilon, delta, params["clip_norm"],
                            injectivity_radius) if method == "tangent_mean" else 1))

    def local_steps():
        if method == "tangent_mean":
            return 1
        batch_size = params["batch_size"] or default_batch_size(min_size)
        total = default_n_iter(method, min_size, dim, epsilon, delta, batch_size)
        return max(1, math.ceil(total / n_rounds))

    def output():
        if method != "tangent_mean":
            return "last"
        if n_rounds == 1 and (math.isinf(injectivity_radius) or injectivity_radius
                              <= round_noise_norm(sizes, dim, epsilon, delta,
                                                  params["clip_norm"])):
            return "shrunk"
        return "average"

    return RunSettings(
        local_method=method, n_rounds=n_rounds, n_sampled=given("n_sampled", lambda: len(sizes)),
        local_steps=given("local_steps", local_steps), output=given("output", output),
    )


def round_noise_norm(sizes, dim, epsilon, delta, clip_norm):
    """sqrt(d) z_1 2C sqrt(N) / n: the expected norm of one round's aggregated noise,
    every agent replying once with weight n_i / n (sum_i (n_i / n)^2 (z_1 2C / n_i)^2 =
    N (z_1 2C / n)^2); 0 without a given C (public).

    Parameters
    ----------
    sizes : list of int
    dim : int
    epsilon, delta : float
    clip_norm : float or None

    Returns
    -------
    noise_norm : float
    """
    if clip_norm is None:
        return 0.0
    z_one = calibrate_gaussian(epsilon, delta, 1)
    return math.sqrt(dim) * z_one * 2.0 * clip_norm * math.sqrt(len(sizes)) / sum(sizes)


def reply_kind(settings):
    """"tangent" for one local step of the tangent mean, else "point" (``RunSpec.reply``).

    Parameters
    ----------
    settings : RunSettings

    Returns
    -------
    reply : {"point", "tangent"}
    """
    one_step = settings.local_method == "tangent_mean" and settings.local_steps == 1
    return "tangent" if one_step else "point"

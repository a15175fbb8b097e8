"""Private matrix completion on MovieLens-100K (Han et al. 2024, Figure 3b, on the 100K set).

Train and test RMSE against epochs for non-private RSGD and DP-RSGD at several epsilons
(``PrivateMatrixCompletion``), with the non-private solution (RSGD run 3x longer) and two
item-mean baselines: non-private per-item means and private per-item means (one Gaussian
release with its own accounting, below). Data: ``load_movielens_100k`` (943 users x 1,682
items), ``split_ratings`` (20% of each user's ratings held out, seed 0), ratings centred at
the public midpoint 3.

Each DP point is its own (epsilon, 1e-5)-DP run calibrated for that many epochs (a curve
of independent releases, not the iterates of one run, which would each cost budget).

Private item means (replace-one on users). User u with k_u ratings contributes
s_u = clip(x_u - 3, -2, 2) 1_Omega / sqrt(k_u) and c_u = 1_Omega / sqrt(k_u); the
pair has L2 norm <= sqrt(4 + 1), so the sums (S, N) have sensitivity 2 sqrt(5). One
Gaussian release of (S, N) with noise multiplier ``calibrate_gaussian(epsilon, delta, 1)``,
charged to its own PrivacyBudget; the prediction for item i is 3 + clip(S_i / N_i, -2, 2)
where the noisy N_i exceeds 3 noise standard deviations, 3 elsewhere (post-processing).
"""

import time
import warnings
from pathlib import Path

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_movielens_100k, split_ratings
from geomstats_dp.distributions.grassmann_bases import GrassmannBases
from geomstats_dp.learning import PrivateMatrixCompletion
from geomstats_dp.learning.matrix_completion import MatrixCompletionLoss, rmse
from geomstats_dp.optim import MiniBatch, minimize
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget, calibrate_gaussian

RANK = 3
REGULARIZATION = 0.02
OFFSET = 3.0
BATCH_SIZE = 31  # about sqrt(943)
CLIP_NORM = 100.0  # public, chosen by hand: the median per-user gradient norm at the start is 107
STEP_SIZE = 0.002  # constant, chosen by hand (not privately) for both RSGD and DP-RSGD
DELTA = 1e-5
EPSILONS = (1.0, 4.0, 16.0)
EPOCHS = (1, 2, 4, 8)
SEED = 0


def private_item_means(train, epsilon, delta, rng):
    """Private per-item means (module docstring); returns (prediction [n_items], budget)."""
    observed = ~np.isnan(train)
    counts = observed.sum(axis=1, keepdims=True)
    scale = 1.0 / np.sqrt(np.maximum(counts, 1))
    sums = (np.clip(np.nan_to_num(train - OFFSET), -2.0, 2.0) * scale).sum(axis=0)
    totals = (observed * scale).sum(axis=0)
    multiplier = calibrate_gaussian(epsilon, delta, 1)
    sensitivity = 2 * np.sqrt(5.0)
    budget = PrivacyBudget(epsilon, delta)
    budget.spend(GaussianEvent(multiplier, sensitivity=sensitivity, label="item means"))
    sigma = multiplier * sensitivity
    sums = sums + sigma * rng.standard_normal(sums.shape)
    totals = totals + sigma * rng.standard_normal(totals.shape)
    reliable = totals > 3 * sigma
    means = np.where(reliable, np.clip(sums / np.where(reliable, totals, 1.0), -2, 2), 0.0)
    return OFFSET + means, budget


def _nonprivate_curve(train, test, n_epochs, steps_per_epoch):
    """Non-private RSGD (no clipping, no noise), RMSE after every epoch."""
    space = GrassmannBases(train.shape[1], RANK)
    loss = MatrixCompletionLoss(space, REGULARIZATION)
    estimator = PrivateMatrixCompletion(RANK, offset=OFFSET, regularization=REGULARIZATION)
    estimator.n_features_in_ = train.shape[1]
    records = []

    def record(step, point):
        if (step + 1) % steps_per_epoch == 0:
            estimator.components_ = to_numpy(point).T
            completed = estimator.predict(train)
            records.append(((step + 1) // steps_per_epoch, rmse(completed, train),
                            rmse(completed, test)))

    strategy = MiniBatch(BATCH_SIZE, clip_norm=1e12, noise_std=0.0)
    minimize(loss, to_backend(train - OFFSET), strategy, n_epochs * steps_per_epoch,
             STEP_SIZE, estimator.init_point, output="last", random_state=SEED,
             callback=record)
    return records


def run(output_dir, quick=False):
    """Run the benchmark; writes matrix_completion.csv and matrix_completion.png."""
    output_dir = Path(output_dir)
    ratings = load_movielens_100k()
    train, test = split_ratings(ratings, test_size=0.2, random_state=SEED)
    n_users = train.shape[0]
    steps_per_epoch = n_users // BATCH_SIZE
    epsilons = EPSILONS[1:2] if quick else EPSILONS
    epochs = EPOCHS[:2] if quick else EPOCHS
    rows = []

    start = time.perf_counter()
    for epoch, train_rmse, test_rmse in _nonprivate_curve(
        train, test, 3 * epochs[-1], steps_per_epoch
    ):
        method = "RSGD (non-private)" if epoch <= epochs[-1] else None
        if method:
            rows.append((method, np.inf, epoch, train_rmse, test_rmse, np.nan))
        if epoch == 3 * epochs[-1]:
            rows.append(("non-private solution", np.inf, epoch, train_rmse, test_rmse,
                         time.perf_counter() - start))

    full = np.full(train.shape, OFFSET)
    rows.append(("constant 3 (reads no data)", 0.0, 0, rmse(full, train), rmse(full, test),
                 np.nan))
    full = np.broadcast_to(_nonprivate_item_means(train), train.shape)
    rows.append(("item means (non-private)", np.inf, 0, rmse(full, train), rmse(full, test),
                 np.nan))

    rng = np.random.default_rng(SEED)
    for epsilon in epsilons:
        means, budget = private_item_means(train, epsilon, DELTA, rng)
        assert abs(budget.spent_epsilon - epsilon) < 1e-6 * epsilon
        full = np.broadcast_to(means, train.shape)
        rows.append(("item means (private)", epsilon, 0, rmse(full, train), rmse(full, test),
                     np.nan))
        for n_epochs in epochs:
            tic = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # NoiseDominatesWarning at small epsilon
                estimator = PrivateMatrixCompletion(
                    RANK, epsilon=epsilon, delta=DELTA, clip_norm=CLIP_NORM,
                    method="rsgd", batch_size=BATCH_SIZE, offset=OFFSET,
                    regularization=REGULARIZATION, n_iter=n_epochs * steps_per_epoch,
                    step_size=STEP_SIZE, random_state=SEED,
                ).fit(train)
            completed = estimator.predict(train)
            rows.append(("DP-RSGD", epsilon, n_epochs, rmse(completed, train),
                         rmse(completed, test), time.perf_counter() - tic))
            print(f"DP-RSGD epsilon={epsilon} epochs={n_epochs}: test RMSE "
                  f"{rows[-1][4]:.3f} ({rows[-1][5]:.1f} s)", flush=True)

    header = "method,epsilon,epochs,train_rmse,test_rmse,seconds"
    lines = [header] + [
        f"{m},{e},{k},{tr:.4f},{te:.4f},{s:.1f}" for m, e, k, tr, te, s in rows
    ]
    (output_dir / "matrix_completion.csv").write_text("\n".join(lines) + "\n")
    _plot(rows, epsilons, epochs, output_dir / "matrix_completion.png")
    return rows


def _nonprivate_item_means(train):
    """Per-item mean rating on the training set (3 for items nobody rated)."""
    observed = ~np.isnan(train)
    sums = np.nansum(train, axis=0)
    counts = observed.sum(axis=0)
    return np.where(counts > 0, sums / np.maximum(counts, 1), OFFSET)


def _plot(rows, epsilons, epochs, path):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 5.0), sharey=True)
    colours = plt.cm.viridis(np.linspace(0.15, 0.85, len(epsilons)))
    for axis, column, title in ((axes[0], 3, "train RMSE"), (axes[1], 4, "test RMSE")):
        curve = [r for r in rows if r[0] == "RSGD (non-private)"]
        axis.plot([r[2] for r in curve], [r[column] for r in curve], "k-o",
                  label="RSGD (non-private)")
        for row in rows:
            if row[0] == "non-private solution":
                axis.axhline(row[column], color="k", ls=":", label="non-private solution")
            if row[0] == "item means (non-private)":
                axis.axhline(row[column], color="grey", ls="--", label="item means")
            if row[0] == "constant 3 (reads no data)":
                axis.axhline(row[column], color="r", ls="-.", lw=1, label="constant 3")
        for colour, epsilon in zip(colours, epsilons):
            curve = [r for r in rows if r[0] == "DP-RSGD" and r[1] == epsilon]
            axis.plot([r[2] for r in curve], [r[column] for r in curve], "-s",
                      color=colour, label=f"DP-RSGD eps={epsilon:g}")
            (means,) = [r for r in rows if r[0] == "item means (private)" and r[1] == epsilon]
            axis.axhline(means[column], color=colour, ls="--", lw=1,
                         label=f"private item means eps={epsilon:g}")
        axis.set_xscale("log", base=2)
        axis.set_xticks(list(epochs), [str(e) for e in epochs])
        axis.set_xlabel("epochs")
        axis.set_title(title)
    axes[0].set_ylabel("RMSE (ratings 1-5)")
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=5)
    fig.suptitle(f"MovieLens-100K, rank {RANK}, delta={DELTA:g}")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)

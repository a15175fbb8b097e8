"""The ``frechet-mean`` and ``account`` subcommands of ``geomstats-dp``."""

import numpy as np

SPACES = ("spd", "sphere", "hyperboloid", "poincare", "euclidean")
SPD_METRICS = ("affine", "bures-wasserstein", "log-euclidean")


def make_space(name, shape, metric=None):
    """The geomstats space called ``name`` whose points have ``shape``."""
    if name not in SPACES:
        raise ValueError(f"--space must be one of {SPACES}, got {name!r}")
    if metric is not None and name != "spd":
        raise ValueError("--metric is only for --space spd")
    if name == "spd":
        from geomstats.geometry.spd_matrices import (
            SPDBuresWassersteinMetric,
            SPDLogEuclideanMetric,
            SPDMatrices,
        )

        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"spd points must be square matrices, got shape {shape}")
        space = SPDMatrices(shape[0])
        metric = metric or "affine"
        if metric not in SPD_METRICS:
            raise ValueError(f"--metric must be one of {SPD_METRICS}, got {metric!r}")
        if metric != "affine":
            metric_class = {"bures-wasserstein": SPDBuresWassersteinMetric,
                            "log-euclidean": SPDLogEuclideanMetric}[metric]
            space.equip_with_metric(metric_class)
        return space
    if len(shape) != 1:
        raise ValueError(f"{name} points must be vectors, got shape {shape}")
    if name == "sphere":
        from geomstats.geometry.hypersphere import Hypersphere

        return Hypersphere(shape[0] - 1)
    if name == "hyperboloid":
        from geomstats.geometry.hyperboloid import Hyperboloid

        return Hyperboloid(shape[0] - 1)
    if name == "poincare":
        from geomstats.geometry.poincare_ball import PoincareBall

        return PoincareBall(shape[0])
    from geomstats.geometry.euclidean import Euclidean

    return Euclidean(shape[0])


def frechet_mean_command(args):
    """Release a private Frechet mean of the points in ``args.path``."""
    from geomstats_dp._backend import to_backend, to_numpy
    from geomstats_dp.learning import PrivateFrechetMean

    points = np.load(args.path)
    space = make_space(args.space, points.shape[1:], args.metric)
    estimator = PrivateFrechetMean(
        space, epsilon=args.epsilon, delta=args.delta, method=args.method,
        clip_norm=args.clip_norm, random_state=args.seed,
    ).fit(to_backend(points))
    estimate = to_numpy(estimator.estimate_)
    print(f"released a ({args.epsilon}, {args.delta})-DP Frechet mean of {len(points)} points "
          f"({args.method}, noise multiplier {estimator.noise_multiplier_:.4g}, "
          f"{estimator.n_iter_} steps)")
    print(f"budget: {estimator.budget_}")
    if args.output:
        np.save(args.output, estimate)
        print(f"written to {args.output}")
    else:
        print(np.array2string(estimate, precision=6))


def account_command(args):
    """Print the epsilon of a Gaussian schedule, or calibrate its noise multiplier."""
    from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian, compose_epsilon

    sampling = args.sampling or ("full" if args.sampling_rate == 1.0 else "without_replacement")
    adjacency = "add_remove" if sampling == "poisson" else "replace_one"
    if args.epsilon is not None:
        z = calibrate_gaussian(args.epsilon, args.delta, args.n_steps, args.sampling_rate,
                               sampling, adjacency)
        print(f"noise multiplier {z:.6g} gives epsilon={args.epsilon} at delta={args.delta} "
              f"over {args.n_steps} steps ({sampling}, rate {args.sampling_rate}, {adjacency})")
    else:
        event = GaussianEvent(args.noise_multiplier, args.n_steps, args.sampling_rate,
                              sampling, adjacency)
        epsilon = compose_epsilon([event], args.delta)
        print(f"epsilon={epsilon:.6g} at delta={args.delta} for noise multiplier "
              f"{args.noise_multiplier} over {args.n_steps} steps ({sampling}, "
              f"rate {args.sampling_rate}, {adjacency})")

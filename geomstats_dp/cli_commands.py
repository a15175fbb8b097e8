"""The ``frechet-mean`` and ``account`` subcommands of ``geomstats-dp``.

User errors raise ValueError (or OSError for files) with a message naming the option or
file; ``cli.main`` prints it on one line and exits with status 2.
"""

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import (
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.privacy import (
    GaussianEvent,
    PrivacyBudget,
    calibrate_gaussian,
    compose_epsilon,
)

METHODS = ("auto", "rgd", "rsgd", "rsvrg", "tangent", "two_stage", "laplace", "extrinsic")
SPACES = ("spd", "sphere", "hyperboloid", "poincare", "euclidean", "grassmannian", "stiefel")
SPD_METRICS = ("affine", "bures-wasserstein", "log-euclidean")
SAMPLINGS = ("full", "without_replacement", "poisson")


def _spd(shape, metric):
    _check_matrix_shape("spd", shape, square=True)
    space = SPDMatrices(shape[0])
    metric_class = {"bures-wasserstein": SPDBuresWassersteinMetric,
                    "log-euclidean": SPDLogEuclideanMetric}.get(metric)
    if metric_class is not None:
        space.equip_with_metric(metric_class)
    return space


def _check_vector_shape(name, shape):
    if len(shape) != 1 or shape[0] < 1:
        raise ValueError(f"--space {name} needs points of shape [n, dim], got [n, "
                         f"{', '.join(map(str, shape))}]")


def _check_matrix_shape(name, shape, square=False):
    if len(shape) != 2 or (square and shape[0] != shape[1]):
        kind = "square matrices" if square else "matrices"
        raise ValueError(f"--space {name} needs {kind}, points of shape [n, p, p]; got "
                         f"[n, {', '.join(map(str, shape))}]")


def _vector_space(name, shape):
    _check_vector_shape(name, shape)
    if name in ("sphere", "hyperboloid") and shape[0] < 2:
        raise ValueError(f"--space {name} needs points of at least 2 coordinates")
    dim = shape[0]
    return {"sphere": lambda: Hypersphere(dim - 1), "hyperboloid": lambda: Hyperboloid(dim - 1),
            "poincare": lambda: PoincareBall(dim), "euclidean": lambda: Euclidean(dim)}[name]()


def make_space(name, shape, metric=None, rank=None):
    """The geomstats space called ``name`` whose points have ``shape``.

    Parameters
    ----------
    name : {"spd", "sphere", "hyperboloid", "poincare", "euclidean", "grassmannian", "stiefel"}
    shape : tuple of int
        Shape of one point.
    metric : {"affine", "bures-wasserstein", "log-euclidean"} or None
        spd only.
    rank : int or None
        grassmannian only: the dimension k of the subspaces (points are n x n projectors).

    Returns
    -------
    space : Manifold
    """
    if name not in SPACES:
        raise ValueError(f"--space must be one of {SPACES}, got {name!r}")
    if metric is not None and name != "spd":
        raise ValueError(f"--metric is only for --space spd, got --space {name}")
    if (rank is None) != (name != "grassmannian"):
        raise ValueError("--rank is required with --space grassmannian, and only there")
    if name == "spd":
        return _spd(shape, metric)
    if name == "grassmannian":
        _check_matrix_shape(name, shape, square=True)
        if rank >= shape[0]:
            raise ValueError(f"--rank must be < the matrix size {shape[0]}, got {rank}")
        return Grassmannian(shape[0], rank)
    if name == "stiefel":
        _check_matrix_shape(name, shape)
        if shape[1] > shape[0]:
            raise ValueError(f"--space stiefel needs n x k points with k <= n, got {shape}")
        return Stiefel(*shape)
    return _vector_space(name, shape)


def load_points(path, name="points file"):
    """Read a float array from a .npy file (no pickles).

    Raises
    ------
    ValueError
        If the file is missing, unreadable, not a numeric .npy array, or empty.
    """
    try:
        points = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"{name} {path!r} does not exist") from None
    except (OSError, ValueError, EOFError) as error:
        raise ValueError(f"{name} {path!r} is not a readable .npy array ({error})") from None
    if not np.issubdtype(points.dtype, np.number) or np.iscomplexobj(points):
        raise ValueError(f"{name} {path!r} must hold real numbers, got dtype {points.dtype}")
    if points.size == 0 or points.ndim < 1:
        raise ValueError(f"{name} {path!r} is empty (shape {points.shape})")
    return points.astype(float)


def _laplace_options(args, space):
    if args.radius is None or args.center is None:
        raise ValueError("--method laplace needs --radius and --center (the public ball "
                         "holding the data)")
    center = load_points(args.center, "--center file")
    if center.shape != tuple(space.shape):
        raise ValueError(f"--center must hold one point of shape {tuple(space.shape)}, "
                         f"got {center.shape}")
    return {"radius": args.radius, "center": center}


def _check_method_options(args):
    if args.method != "laplace" and (args.radius is not None or args.center is not None):
        raise ValueError("--radius and --center are only for --method laplace")


def frechet_mean_command(args):
    """Release a private Frechet mean of the points in ``args.path``."""
    _check_method_options(args)
    points = load_points(args.path)
    if points.ndim < 2:
        raise ValueError(f"points file {args.path!r} must have shape [n, *point_shape], "
                         f"got {points.shape}")
    space = make_space(args.space, points.shape[1:], args.metric, args.rank)
    laplace = args.method == "laplace"
    options = _laplace_options(args, space) if laplace else {"clip_norm": args.clip_norm}
    if laplace:
        options["center"] = to_backend(options["center"])
    budget = PrivacyBudget(args.epsilon, 0.0 if laplace else args.delta)
    estimator = PrivateFrechetMean(
        space, epsilon=args.epsilon, delta=args.delta, method=args.method,
        random_state=args.seed, budget=budget, **options,
    ).fit(to_backend(points))
    estimate = to_numpy(estimator.estimate_)
    guarantee = f"{args.epsilon}-DP" if laplace else f"({args.epsilon}, {args.delta})-DP"
    print(f"released a {guarantee} Frechet mean of {len(points)} points "
          f"({_mechanism_summary(estimator, args.method)})")
    at_delta = "(pure DP)" if laplace else f"at delta={budget.delta:g}"
    print(f"budget: spent epsilon={budget.spent_epsilon:.6g} of {budget.epsilon:g} "
          f"{at_delta} in {len(budget.events)} events")
    if args.output:
        np.save(args.output, estimate)
        print(f"release written to {args.output}")
    else:
        print("release (no --output given, printed here only):")
        print(np.array2string(estimate, precision=6))


def _mechanism_summary(estimator, method):
    """What the release drew: the Laplace scale, or the Gaussian steps' noise."""
    if method == "laplace":
        (event,) = estimator.events_
        return (f"Riemannian Laplace, scale {event.noise_scale:.4g} for a sensitivity of "
                f"{event.sensitivity:.4g}")
    return (f"{method}, noise multiplier {estimator.noise_multiplier_:.4g}, "
            f"{estimator.n_iter_} steps")


def account_command(args):
    """Print the epsilon of a Gaussian schedule, or calibrate its noise multiplier."""
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

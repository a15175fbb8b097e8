"""The ``geomstats-dp`` command: the EMG demo, a private Frechet mean of a file, accounting.

    geomstats-dp demo [--epsilon 1 --delta 1e-5 --output DIR]
    geomstats-dp frechet-mean points.npy --space spd --epsilon 1 --clip-norm 5
    geomstats-dp account --epsilon 1 --delta 1e-5 --n-steps 100 [--sampling-rate 0.01]
"""

import argparse
import sys



def _positive_float(text):
    """argparse type: a finite float > 0."""
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def build_parser():
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="geomstats-dp", description="Differential privacy on Riemannian manifolds."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="private Frechet mean of EMG covariances")
    demo.add_argument("--epsilon", type=_positive_float, default=1.0)
    demo.add_argument("--delta", type=float, default=1e-5)
    demo.add_argument("--clip-norm", type=_positive_float, default=5.0)
    demo.add_argument("--method", choices=("rgd", "rsgd", "rsvrg", "laplace"), default="rgd")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--output", default="demo_output", help="folder for the plot")

    fit = commands.add_parser("frechet-mean", help="private Frechet mean of a .npy file")
    fit.add_argument("path", help=".npy file of points, shape [n, *space.shape]")
    fit.add_argument("--space", required=True, help="spd, sphere, hyperboloid, poincare, euclidean")
    fit.add_argument("--metric", default=None, help="spd only: affine, bures-wasserstein, log-euclidean")
    fit.add_argument("--epsilon", type=_positive_float, default=1.0)
    fit.add_argument("--delta", type=float, default=1e-5)
    fit.add_argument("--clip-norm", type=_positive_float, required=True)
    fit.add_argument("--method", choices=("rgd", "rsgd", "rsvrg"), default="rgd")
    fit.add_argument("--seed", type=int, default=None)
    fit.add_argument("--output", default=None, help=".npy file for the released mean")

    account = commands.add_parser("account", help="epsilon of a Gaussian schedule, or its noise")
    account.add_argument("--delta", type=float, default=1e-5)
    account.add_argument("--n-steps", type=int, required=True)
    account.add_argument("--sampling-rate", type=float, default=1.0)
    account.add_argument(
        "--sampling", choices=("full", "without_replacement", "poisson"), default=None
    )
    target = account.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=_positive_float, help="calibrate the noise")
    target.add_argument("--noise-multiplier", type=_positive_float, help="report epsilon")
    return parser


def main(argv=None):
    """Entry point of the ``geomstats-dp`` console command."""
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from geomstats_dp.demo import run_demo

        run_demo(
            epsilon=args.epsilon,
            delta=args.delta,
            clip_norm=args.clip_norm,
            method=args.method,
            seed=args.seed,
            output=args.output,
        )
    elif args.command == "frechet-mean":
        from geomstats_dp.cli_commands import frechet_mean_command

        frechet_mean_command(args)
    else:
        from geomstats_dp.cli_commands import account_command

        account_command(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

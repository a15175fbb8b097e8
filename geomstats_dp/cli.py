"""The ``geomstats-dp`` command: the EMG demo, a private Frechet mean of a file, accounting.

    geomstats-dp demo [--epsilon 1 --delta 1e-5 --output DIR]
    geomstats-dp frechet-mean points.npy --space spd --epsilon 1 --clip-norm 5
    geomstats-dp frechet-mean points.npy --space sphere --method laplace --radius 0.5 \
        --center center.npy
    geomstats-dp account --epsilon 1 --delta 1e-5 --n-steps 100 [--sampling-rate 0.01]

A user error (a bad option, a missing or unreadable file, NaN or points off the space)
prints one line ``geomstats-dp: error: ...`` on stderr and exits with status 2.
"""

import argparse
import math
import sys

from geomstats_dp import __version__
from geomstats_dp.cli_commands import (
    METHODS,
    SAMPLINGS,
    SPACES,
    SPD_METRICS,
    account_command,
    frechet_mean_command,
)
from geomstats_dp.demo import run_demo


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block) and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _Formatter(argparse.HelpFormatter):
    """Help that ends each option with its default, unless the help text states it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default is argparse.SUPPRESS or action.required:
            return text
        if action.option_strings and action.default is not None:
            return f"{text} (default: %(default)s)"
        return text


def _number(text, what):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    return value


def _positive_float(text):
    """argparse type: a finite float > 0."""
    value = _number(text, "a finite number > 0")
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def _delta(text):
    """argparse type: a float in [0, 1)."""
    value = _number(text, "a number in [0, 1)")
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text}")
    return value


def _gaussian_delta(text):
    """argparse type: a float in (0, 1), the delta a Gaussian release needs."""
    value = _number(text, "a number in (0, 1)")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text}")
    return value


def _rate(text):
    """argparse type: a float in (0, 1]."""
    value = _number(text, "a number in (0, 1]")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text}")
    return value


def _integer(text, low, what):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
    return value


def _seed(text):
    """argparse type: an integer >= 0."""
    return _integer(text, 0, "an integer >= 0")


def _positive_int(text):
    """argparse type: an integer >= 1."""
    return _integer(text, 1, "an integer >= 1")


def _clip_norm(text):
    """argparse type: a finite float > 0, or "auto"."""
    return "auto" if text == "auto" else _positive_float(text)


def _add_privacy_options(parser, delta_type=_gaussian_delta,
                         delta_help="delta of the release, in (0, 1)", seed=None):
    parser.add_argument("--epsilon", type=_positive_float, default=1.0,
                        help="epsilon of the release, > 0")
    parser.add_argument("--delta", type=delta_type, default=1e-5, help=delta_help)
    parser.add_argument("--seed", type=_seed, default=seed, help="random seed, an integer >= 0"
                        + ("" if seed is not None else " (default: fresh entropy)"))


def build_parser():
    """The argument parser of every subcommand."""
    formatter = _Formatter
    parser = _Parser(
        prog="geomstats-dp", description="Differential privacy on Riemannian manifolds.",
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser)

    demo = commands.add_parser("demo", help="private Frechet mean of EMG covariances",
                               formatter_class=formatter)
    _add_privacy_options(demo, seed=0)
    demo.add_argument("--clip-norm", type=_positive_float, default=5.0,
                      help="clip norm C, > 0")
    demo.add_argument("--method", choices=METHODS, default="auto", help="mechanism")
    demo.add_argument("--output", default="demo_output", help="folder for the plot")

    fit = commands.add_parser("frechet-mean", help="private Frechet mean of a .npy file",
                              formatter_class=formatter)
    fit.add_argument("path", help=".npy file of points, shape [n, *space.shape]")
    fit.add_argument("--space", required=True, choices=SPACES,
                     help="the manifold of the points (required)")
    fit.add_argument("--metric", choices=SPD_METRICS, default=None,
                     help="spd only (default: affine)")
    fit.add_argument("--rank", type=_positive_int, default=None,
                     help="grassmannian only (and required there): dimension k of the subspaces")
    _add_privacy_options(fit, _delta, "delta of the release, in [0, 1); 0 only for the laplace "
                         "method (pure DP, where delta is ignored)")
    fit.add_argument("--method", choices=METHODS, default="auto", help="mechanism")
    fit.add_argument("--clip-norm", type=_clip_norm, default="auto",
                     help="rgd/rsgd/rsvrg: clip norm C > 0, or 'auto' (a private quantile)")
    fit.add_argument("--radius", type=_positive_float, default=None,
                     help="laplace only (and required there): radius of the data's public ball")
    fit.add_argument("--center", default=None,
                     help="laplace only (and required there): .npy file of the ball's center")
    fit.add_argument("--output", default=None,
                     help=".npy file for the released mean (default: print it)")

    account = commands.add_parser("account", help="epsilon of a Gaussian schedule, or its noise",
                                  formatter_class=formatter)
    account.add_argument("--delta", type=_gaussian_delta, default=1e-5, help="delta, in (0, 1)")
    account.add_argument("--n-steps", type=_positive_int, required=True,
                         help="number of Gaussian steps (required)")
    account.add_argument("--sampling-rate", type=_rate, default=1.0,
                         help="probability a record enters a step, in (0, 1]")
    account.add_argument("--sampling", choices=SAMPLINGS, default=None,
                         help="default: full if the rate is 1, else without_replacement")
    target = account.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=_positive_float,
                        help="target epsilon: calibrate the noise (this or --noise-multiplier)")
    target.add_argument("--noise-multiplier", type=_positive_float,
                        help="noise multiplier: report its epsilon (this or --epsilon)")
    return parser


def main(argv=None):
    """Entry point of the ``geomstats-dp`` console command.

    Returns
    -------
    status : int
        0; user errors exit with status 2 (SystemExit) after one line on stderr.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _run(args)
    except (ValueError, TypeError, OSError, EOFError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        parser.exit(2, f"{parser.prog} {args.command}: error: {message}\n")
    return 0


def _run(args):
    if args.command == "demo":
        run_demo(epsilon=args.epsilon, delta=args.delta, clip_norm=args.clip_norm,
                 method=args.method, seed=args.seed, output=args.output)
    elif args.command == "frechet-mean":
        frechet_mean_command(args)
    else:
        account_command(args)


if __name__ == "__main__":
    sys.exit(main())

"""The geomstats-dp command: account, frechet-mean and the demo."""

import re

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp import __version__
from geomstats_dp._backend import to_numpy
from geomstats_dp.cli import build_parser, main
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget, compose_epsilon
from tests.conftest import BACKEND


def _number(pattern, text):
    return float(re.search(pattern, text).group(1))


def test_account_calibrates_then_reports_the_same_epsilon(capsys):
    main(["account", "--epsilon", "0.8", "--delta", "1e-6", "--n-steps", "50",
          "--sampling-rate", "0.02"])
    z = _number(r"noise multiplier ([0-9.]+)", capsys.readouterr().out)
    event = GaussianEvent(z, 50, 0.02, "without_replacement")
    assert compose_epsilon([event], 1e-6) == pytest.approx(0.8, rel=1e-3)
    main(["account", "--noise-multiplier", str(z), "--delta", "1e-6", "--n-steps", "50",
          "--sampling-rate", "0.02"])
    assert _number(r"epsilon=([0-9.]+)", capsys.readouterr().out) == pytest.approx(0.8, rel=1e-3)


def _sphere_points(tmp_path):
    gs.random.seed(0)
    points = to_numpy(Hypersphere(2).random_von_mises_fisher(kappa=20, n_samples=100))
    np.save(tmp_path / "points.npy", points)
    np.save(tmp_path / "center.npy", np.array([0.0, 0.0, 1.0]))
    return points


def _release(points, **kwargs):
    """The estimator's release for the same data, options and seed as the command's."""
    estimator = PrivateFrechetMean(Hypersphere(2), epsilon=0.7, delta=1e-6, random_state=3,
                                   budget=PrivacyBudget(0.7, 1e-6), **kwargs)
    return to_numpy(estimator.fit(gs.array(points)).estimate_)


@pytest.mark.filterwarnings("ignore:some points lie outside the ball")
@pytest.mark.parametrize(
    ("options", "kwargs"),
    [
        (["--clip-norm", "1.0"], {"clip_norm": 1.0}),
        (["--method", "rsgd", "--clip-norm", "1.0"], {"method": "rsgd", "clip_norm": 1.0}),
        (["--method", "laplace", "--radius", "0.5", "--center", "CENTER"],
         {"method": "laplace", "radius": 0.5, "center": gs.array([0.0, 0.0, 1.0])}),
    ],
)
def test_frechet_mean_command_saves_the_estimators_release(tmp_path, capsys, options, kwargs):
    points = _sphere_points(tmp_path)
    options = [str(tmp_path / "center.npy") if o == "CENTER" else o for o in options]
    main(["frechet-mean", str(tmp_path / "points.npy"), "--space", "sphere",
          "--epsilon", "0.7", "--delta", "1e-6", "--seed", "3",
          "--output", str(tmp_path / "mean.npy"), *options])
    saved = np.load(tmp_path / "mean.npy")
    # the same point as the estimator's release (an antipode or any other point fails)
    np.testing.assert_allclose(saved, _release(points, **kwargs), atol=1e-10)
    out = capsys.readouterr().out
    assert _number(r"spent epsilon=([0-9.e+-]+) of", out) == pytest.approx(0.7, rel=1e-6)
    assert f"release written to {tmp_path / 'mean.npy'}" in out


@pytest.mark.filterwarnings("ignore:some points lie outside the ball")
def test_laplace_release_reports_its_scale_and_no_gaussian_terms(tmp_path, capsys):
    points = _sphere_points(tmp_path)
    main(["frechet-mean", str(tmp_path / "points.npy"), "--space", "sphere", "--epsilon",
          "0.7", "--seed", "3", "--method", "laplace", "--radius", "0.5", "--center",
          str(tmp_path / "center.npy"), "--output", str(tmp_path / "mean.npy")])
    out = capsys.readouterr().out
    estimator = PrivateFrechetMean(Hypersphere(2), epsilon=0.7, method="laplace", radius=0.5,
                                   center=gs.array([0.0, 0.0, 1.0]), random_state=3,
                                   budget=PrivacyBudget(0.7, 0.0))
    (event,) = estimator.fit(gs.array(points)).events_
    assert "released a 0.7-DP Frechet mean" in out
    assert _number(r"scale ([0-9.e+-]+) for", out) == pytest.approx(event.noise_scale,
                                                                   rel=1e-3)
    assert "(pure DP) in 1 events" in out
    summary = "\n".join(out.splitlines()[:2])  # the release and budget lines
    for gaussian_term in ("noise multiplier", "steps", "delta"):
        assert gaussian_term not in summary


def test_frechet_mean_command_without_output_prints_the_release(tmp_path, capsys):
    points = _sphere_points(tmp_path)
    main(["frechet-mean", str(tmp_path / "points.npy"), "--space", "sphere",
          "--epsilon", "0.7", "--delta", "1e-6", "--seed", "3", "--clip-norm", "1.0"])
    out = capsys.readouterr().out
    assert "no --output given, printed here only" in out
    printed = np.array(re.search(r"\[([^\]]+)\]\s*$", out).group(1).split(), dtype=float)
    np.testing.assert_allclose(printed, _release(points, clip_norm=1.0), atol=1e-6)


def _write(tmp_path, name, array):
    np.save(tmp_path / name, array)
    return str(tmp_path / name)


USER_ERRORS = {
    "nan": (["frechet-mean", "NAN", "--space", "sphere"], "non-finite value at index (3, 0)"),
    "off_sphere": (["frechet-mean", "OFF", "--space", "sphere"], "not on Hypersphere"),
    "empty_array": (["frechet-mean", "EMPTY", "--space", "sphere"], "is empty"),
    "empty_file": (["frechet-mean", "ZERO", "--space", "sphere"], "not a readable .npy"),
    "missing": (["frechet-mean", "MISSING", "--space", "sphere"], "does not exist"),
    "complex": (["frechet-mean", "COMPLEX", "--space", "sphere"], "must hold real numbers"),
    "delta_one": (["frechet-mean", "POINTS", "--space", "sphere", "--delta", "1"],
                  "argument --delta: expected a number in [0, 1), got 1"),
    "delta_nan": (["frechet-mean", "POINTS", "--space", "sphere", "--delta", "nan"],
                  "argument --delta: expected a number in [0, 1), got nan"),
    "space": (["frechet-mean", "POINTS", "--space", "foo"], "argument --space: invalid choice"),
    "seed": (["frechet-mean", "POINTS", "--space", "sphere", "--seed", "-1"],
             "argument --seed: expected an integer >= 0, got -1"),
    "epsilon": (["frechet-mean", "POINTS", "--space", "sphere", "--epsilon", "inf"],
                "argument --epsilon: expected a finite number > 0"),
    "shape": (["frechet-mean", "POINTS", "--space", "spd"], "--space spd needs square"),
    "metric": (["frechet-mean", "POINTS", "--space", "sphere", "--metric", "affine"],
               "--metric is only for --space spd"),
    "laplace": (["frechet-mean", "POINTS", "--space", "sphere", "--method", "laplace"],
                "--method laplace needs --radius and --center"),
    "radius": (["frechet-mean", "POINTS", "--space", "sphere", "--method", "laplace",
                "--radius", "1", "--center", "CENTER"], "radius must be < r*"),
    "n_steps": (["account", "--epsilon", "1", "--n-steps", "0"],
                "argument --n-steps: expected an integer >= 1, got 0"),
    "account_delta_zero": (["account", "--epsilon", "1", "--n-steps", "5", "--delta", "0"],
                           "argument --delta: expected a number in (0, 1), got 0"),
    "demo_delta_zero": (["demo", "--delta", "0"],
                        "argument --delta: expected a number in (0, 1), got 0"),
    "rate": (["account", "--epsilon", "1", "--n-steps", "5", "--sampling-rate", "2"],
             "argument --sampling-rate: expected a number in (0, 1], got 2"),
}


@pytest.mark.parametrize("case", sorted(USER_ERRORS))
def test_user_errors_print_one_line_and_exit_with_status_2(tmp_path, capsys, case):
    points = _sphere_points(tmp_path)
    nan, off = points.copy(), points.copy()
    nan[3, 0] = np.nan
    off[5] *= 2
    (tmp_path / "zero.npy").write_bytes(b"")
    files = {
        "POINTS": str(tmp_path / "points.npy"), "CENTER": str(tmp_path / "center.npy"),
        "NAN": _write(tmp_path, "nan.npy", nan), "OFF": _write(tmp_path, "off.npy", off),
        "EMPTY": _write(tmp_path, "empty.npy", np.zeros((0, 3))),
        "ZERO": str(tmp_path / "zero.npy"), "MISSING": str(tmp_path / "missing.npy"),
        "COMPLEX": _write(tmp_path, "complex.npy", points + 0j),
    }
    argv, message = USER_ERRORS[case]
    with pytest.raises(SystemExit) as exit_info:
        main([files.get(word, word) for word in argv])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("geomstats-dp")
    assert message in lines[0] and "Traceback" not in captured.err
    assert captured.out == ""


@pytest.mark.parametrize("command", ["demo", "frechet-mean", "account"])
def test_help_shows_choices_and_defaults_of_every_option(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    parser = build_parser()
    subparser = parser._subparsers._group_actions[0].choices[command]
    for action in subparser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        pattern = re.escape(action.option_strings[0]) + r" [A-Z_{},a-z-]*(.*?)(?= --|$)"
        described = re.search(pattern, text.split("options:")[1]).group(1)
        assert ("default" in described or "required" in described
                or action.dest in ("epsilon", "noise_multiplier")), action.dest
        if action.choices:
            assert all(choice in text for choice in action.choices)


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"geomstats-dp {__version__}"


def test_bad_arguments_exit_with_a_message(capsys):
    with pytest.raises(SystemExit):
        main(["account", "--epsilon", "-1", "--n-steps", "5"])
    assert "expected a finite number > 0" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(BACKEND != "numpy", reason="make demo runs on the numpy backend")
def test_demo_releases_all_means_and_writes_the_plot(tmp_path, capsys):
    main(["demo", "--output", str(tmp_path)])
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.split()[:1] and
            line.split()[0] in ("all", "rock", "scissors", "paper", "ok")]
    assert len(rows) == 5
    for row in rows:
        assert row[2] in ("rgd", "tangent", "two_stage")  # what "auto" chose
        assert float(row[3]) == pytest.approx(1.0, rel=1e-3)  # epsilon spent
        assert float(row[5]) < float(row[6])  # private error below the data spread
    assert (tmp_path / "emg_private_means.png").stat().st_size > 10_000

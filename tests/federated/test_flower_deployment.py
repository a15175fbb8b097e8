"""PriRFed on Flower's deployment runtime: real processes on localhost.

Starts one ``flower-superlink`` and two ``flower-supernode`` processes (insecure mode,
127.0.0.1, free ports), runs the app with ``flwr run``, compares the release with the
in-process engine and stops every process it started, also on failure (bounded waits).
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.privacy import PrivacyBudget

pytest.importorskip("flwr")

pytestmark = [pytest.mark.slow, pytest.mark.flower, pytest.mark.backend_independent]

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]  # the checkout under test
LIMIT_S = 180
APP = """from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.federated import PriRFed, flower_deploy

client = flower_deploy.client
server = flower_deploy.server


def make_estimator():
    return PriRFed(SPDMatrices(2), epsilon=1.0, delta=1e-5, n_rounds=2, n_sampled=2,
                   local_steps=2, local_method="rgd", clip_norm=1.0, random_state=5,
                   round_timeout=120.0)
"""


def make_estimator():
    namespace = {}
    exec(APP, namespace)  # the app's own factory, as every machine runs it
    return namespace["make_estimator"]()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def toml_value(value):
    return f'"{value}"' if isinstance(value, str) else repr(value)


def write_app(root, config):
    (root / "prirfed_app.py").write_text(APP)
    lines = "\n".join(f"{key} = {toml_value(value)}" for key, value in config.items())
    (root / "pyproject.toml").write_text(f"""[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "prirfed-app"
version = "1.0.0"
description = "PriRFed deployment test"
license = "MIT"
dependencies = []

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "geomstatsdp"

[tool.flwr.app.components]
serverapp = "prirfed_app:server"
clientapp = "prirfed_app:client"

[tool.flwr.app.config]
{lines}
""")


def test_superlink_two_supernodes_and_flwr_run_match_the_local_engine(tmp_path):
    space = SPDMatrices(2)
    gs.random.seed(0)
    data = [to_numpy(space.random_point(n)) for n in (8, 12)]
    out = tmp_path / "release.npy"
    budget = PrivacyBudget(1.0, 1e-5)
    deployed_estimator = make_estimator().set_params(budget=budget)
    config = deployed_estimator.deployment_config(
        [8, 12], out, estimator="prirfed_app:make_estimator"
    )
    # the whole run is charged before it starts, as fit charges it
    assert budget.spent_epsilon == pytest.approx(deployed_estimator.guarantee_.epsilon)
    app = tmp_path / "app"
    app.mkdir()
    write_app(app, config)
    home = tmp_path / "flwr_home"
    home.mkdir()
    port = free_port()
    (home / "config.toml").write_text(
        f'[superlink]\ndefault = "test"\n\n[superlink.test]\n'
        f'address = "127.0.0.1:{port}"\ninsecure = true\n'
    )
    # the processes import this checkout's library, whatever the environment installs
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, FLWR_TELEMETRY_ENABLED="0", FLWR_HOME=str(home),
               PYTHONPATH=pythonpath, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    started = []

    def start(args, log):
        process = subprocess.Popen(args, env=env, cwd=tmp_path, start_new_session=True,
                                   stdout=open(tmp_path / log, "w"), stderr=subprocess.STDOUT)
        started.append(process)
        return process

    try:
        start([BIN / "flower-superlink", "--insecure", "--host", "127.0.0.1",
               "--port", str(port)], "superlink.log")
        for agent, records in enumerate(data):
            np.save(tmp_path / f"agent_{agent}.npy", records)
            start([BIN / "flower-supernode", "--insecure", "--superlink",
                   f"127.0.0.1:{port}", "--host", "127.0.0.1", "--port", str(free_port()),
                   "--node-config",
                   f'partition-id={agent} data-path="{tmp_path / f"agent_{agent}.npy"}"'],
                  f"supernode_{agent}.log")
        deadline = time.monotonic() + LIMIT_S
        while True:  # flwr run fails until the SuperLink listens
            submitted = subprocess.run([BIN / "flwr", "run", str(app), "test"], env=env,
                                       cwd=tmp_path, capture_output=True, text=True,
                                       timeout=60)
            output = submitted.stdout + submitted.stderr
            if "Successfully started run" in output:
                break
            assert "Invalid Flower App" not in output, output
            assert time.monotonic() < deadline, submitted.stdout + submitted.stderr
            time.sleep(2)
        while not out.exists():
            assert time.monotonic() < deadline, (tmp_path / "superlink.log").read_text()[-3000:]
            time.sleep(1)
        time.sleep(0.5)  # let np.save finish writing
        deployed = to_numpy(deployed_estimator.load_release(out).estimate_)
    finally:
        for process in started:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
    local = make_estimator().fit(data)
    np.testing.assert_allclose(deployed, to_numpy(local.estimate_), rtol=0, atol=1e-12)

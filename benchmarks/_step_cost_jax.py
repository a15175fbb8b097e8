"""The issue's JAX baseline of ``step_cost``: the minimal DP-RSGD step as a jitted
``jax.lax.scan`` loop (float64, one XLA thread), on S^783 and SPD(11).

Each loop is the minimal numpy step of ``step_cost`` written in ``jax.numpy``: closed-form
log and exp, the clip, a tangent normal draw; the records' indices and the normals of all
steps are drawn by ``jax.random`` inside the same jitted call, then ``lax.scan`` runs the
steps. ``check`` replays given draws through the scanned step and through the numpy loop
and compares the end points, so that the baseline times the same step.

JAX is optional (the ``bench`` extra): ``available()`` says whether it imports.
"""

import math
import os

import numpy as np

from benchmarks import step_cost as base

# one XLA thread: the numpy and torch steps run with OMP_NUM_THREADS=1
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the rows are skipped
    jax = jnp = None
else:
    jax.config.update("jax_enable_x64", True)


def available():
    """Whether JAX imports (else ``step_cost`` writes its JAX columns as NaN)."""
    return jax is not None


def _sphere_step(point, inputs):
    """One minimal step on the sphere from ``point``, inputs (record, d + 1 normals)."""
    record, normals = inputs
    cosine = jnp.clip(record @ point, -1.0, 1.0)
    angle = jnp.arccos(cosine)
    along = record - cosine * point
    along_norm = jnp.sqrt(along @ along)
    safe_norm = jnp.where(along_norm > 0, along_norm, 1.0)
    gradient = along * jnp.where(along_norm > 0, -angle / safe_norm, 0.0)
    gradient = gradient * jnp.where(angle > base.CLIP_NORM, base.CLIP_NORM / angle, 1.0)
    noise = normals - (normals @ point) * point
    step = -base.STEP * (gradient + base.NOISE_STD * noise)
    length = jnp.sqrt(step @ step)
    return jnp.cos(length) * point + (jnp.sin(length) / length) * step, None


def _spd_step(carry, inputs):
    """One minimal affine-invariant step on SPD(m) from the factor and its inverse,
    inputs (record, [m, m] normals of which the upper triangle is used)."""
    factor, inverse = carry
    record, drawn = inputs
    vals, vecs = jnp.linalg.eigh(inverse @ record @ inverse.T)
    whitened_log = (vecs * jnp.log(vals)) @ vecs.T
    norm = jnp.sqrt(jnp.sum(whitened_log * whitened_log))
    gradient = -whitened_log * jnp.minimum(1.0, base.CLIP_NORM / norm)
    drawn = jnp.triu(drawn) + jnp.triu(drawn, 1).T
    step_vals, step_vecs = jnp.linalg.eigh(-base.STEP * (gradient + base.NOISE_STD * drawn))
    halves = jnp.exp(step_vals / 2)
    return (factor @ (step_vecs * halves), (step_vecs.T / halves[:, None]) @ inverse), None


def _scan_sphere(data, indices, normals):
    """The sphere steps on given draws from the north pole; the last point."""
    start = jnp.zeros(data.shape[1]).at[0].set(1.0)
    return jax.lax.scan(_sphere_step, start, (data[indices], normals))[0]


def _scan_spd(data, indices, normals):
    """The SPD steps on given draws from the identity; the last point."""
    size = data.shape[1]
    scales = jnp.where(jnp.eye(size, dtype=bool), 1.0, 1 / math.sqrt(2))
    identity = jnp.eye(size)
    factor = jax.lax.scan(_spd_step, (identity, identity),
                          (data[indices], normals * scales))[0][0]
    return factor @ factor.T


SCANS = {"sphere": _scan_sphere, "spd": _scan_spd}


def _steps(data, key, n_steps, kind):
    """``n_steps`` steps of ``kind`` with the draws made by ``jax.random`` in the call."""
    index_key, noise_key = jax.random.split(key)
    indices = jax.random.randint(index_key, (n_steps,), 0, data.shape[0])
    normals = jax.random.normal(noise_key, (n_steps, *data.shape[1:]), dtype=jnp.float64)
    return SCANS[kind](data, indices, normals)


def loop(data, n_steps, kind):
    """``run(seed)``: ``n_steps`` jitted steps of ``kind`` ("sphere" or "spd") on the
    numpy ``data``, waited for; compiled here, before any timing."""
    on_device = jnp.asarray(data)
    steps = jax.jit(_steps, static_argnums=(2, 3))

    def run(seed):
        return steps(on_device, jax.random.key(seed), n_steps, kind).block_until_ready()

    run(0)
    return run


def check(data, kind, n_steps=20, seed=0):
    """Max absolute difference between the end points of the scanned steps and of the
    numpy loop of ``step_cost`` on the same draws (numpy's generator)."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(data.shape[0], size=n_steps)
    normals = rng.standard_normal((n_steps, *data.shape[1:]))
    replay = iter(normals)
    scanned = np.asarray(SCANS[kind](jnp.asarray(data), jnp.asarray(indices),
                                     jnp.asarray(normals)))
    if kind == "sphere":
        start = np.eye(data.shape[1])[0]
        reference = base._minimal_sphere_loop(data, indices, start, lambda: next(replay).copy())
    else:
        scales = np.where(np.eye(data.shape[1], dtype=bool), 1.0, 1 / math.sqrt(2))
        reference = base._minimal_spd_loop(data, indices, np.eye(data.shape[1]), np,
                                           lambda: next(replay) * scales)
    return float(np.abs(scanned - reference).max())

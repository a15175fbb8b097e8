"""The run configuration of a PriRFed deployed on Flower's deployment runtime.

``PriRFed.deployment_config`` charges the budget and returns this configuration; the
deployed apps (``federated.flower_deploy``) rebuild the same PriRFed from it on every
machine: from ``estimator = "module:function"`` (any space and loss), or from the flat
parameters of a squared-distance PriRFed on a sphere.
"""

from geomstats.geometry.hypersphere import Hypersphere


def run_config(estimator, settings, sizes, out, seed, estimator_path=None):
    """The run configuration (for ``[tool.flwr.app.config]`` or ``flwr run --run-config``).

    Parameters
    ----------
    estimator : PriRFed
        With its parameters checked and ``clip_norm`` given.
    settings : RunSettings
        Its resolved settings for ``sizes``.
    sizes : list of int
        The agents' public sizes.
    out : str or path-like
        Where the ServerApp writes the release.
    seed : int
        The run's root seed.
    estimator_path : str, optional
        "module:function" returning the same PriRFed on every machine.

    Returns
    -------
    config : dict
    """
    if estimator_path is None:
        config = flat_config(estimator, settings)
    elif isinstance(estimator_path, str) and ":" in estimator_path:
        config = {"estimator": estimator_path}
    else:
        raise ValueError(f"estimator must be 'module:function', got {estimator_path!r}")
    return dict(config, sizes=",".join(str(size) for size in sizes), seed=seed,
                out=str(out), output=settings.output,
                **{"round-timeout": float(estimator.round_timeout or 0)})


def flat_config(estimator, settings):
    """The flat run configuration of a squared-distance PriRFed on a sphere."""
    if (not isinstance(estimator.space, Hypersphere) or estimator.loss is not None
            or estimator.init_point is not None):
        raise ValueError("without estimator='module:function', a deployment describes only "
                         "a Hypersphere with the squared distance loss (loss=None) from the "
                         "default start (init_point=None)")
    step_size = estimator.step_size
    if step_size is not None and not isinstance(step_size, (int, float)):
        raise ValueError("a callable step_size needs estimator='module:function'")
    return {"dim": int(estimator.space.dim), "epsilon": float(estimator.epsilon),
            "delta": float(estimator.delta), "n-rounds": settings.n_rounds,
            "n-sampled": settings.n_sampled, "local-steps": settings.local_steps,
            "local-method": settings.local_method, "clip-norm": float(estimator.clip_norm),
            "batch-size": int(estimator.batch_size or 0), "step-size": float(step_size or 0),
            "aggregation": estimator.aggregation, "accountant": estimator.accountant}

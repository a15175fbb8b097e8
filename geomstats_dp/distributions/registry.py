"""Which isometric-transport sampler serves which geomstats metric class."""

from geomstats.geometry.scalar_product_metric import ScalarProductMetric

_TRANSPORTS = {}


def register_transport(*metric_classes):
    """Class decorator: make a sampler the closed-form transport for ``metric_classes``.

    Subclasses of a registered metric class inherit its sampler unless they register
    their own (the lookup walks the metric's MRO).

    Examples
    --------
    >>> @register_transport(MyMetric)
    ... class MyTransport(IsometricTransport):
    ...     ...
    """

    def decorator(sampler_class):
        for metric_class in metric_classes:
            _TRANSPORTS[metric_class] = sampler_class
        return sampler_class

    return decorator


def unwrap_metric(metric):
    """Return ``(underlying_metric, scale)`` for ``scale * underlying_metric``.

    geomstats' ``ScalarProductMetric`` multiplies the metric tensor by ``scale``; it never
    nests (its constructor multiplies the scales), but a loop costs nothing.
    """
    scale = 1.0
    while isinstance(metric, ScalarProductMetric):
        scale *= float(metric.scale)
        metric = metric.underlying_metric
    return metric, scale


def find_transport(metric, space=None):
    """Return the transport sampler class registered for ``metric``'s class, or None.

    Walks the metric's MRO; with ``space`` given, a sampler whose ``supports(space)`` is
    False is passed over (a metric class shared by spaces of different shapes).
    """
    for metric_class in type(metric).__mro__:
        sampler_class = _TRANSPORTS.get(metric_class)
        if sampler_class is not None and (space is None or sampler_class.supports(space)):
            return sampler_class
    return None


def membership_checker(space):
    """The transport sampler of ``space``'s metric, for its closed-form ``belongs`` and
    ``is_tangent`` (one pass over each point), or None where no transport is registered."""
    metric, _ = unwrap_metric(space.metric) if hasattr(space, "metric") else (None, 1.0)
    sampler_class = find_transport(metric, space) if metric is not None else None
    return sampler_class(space, metric) if sampler_class is not None else None

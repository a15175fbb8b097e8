"""The run shipped to Flower's simulation workers by value (cloudpickle).

A loss defined in the user's script, a lambda or a closure cannot be pickled by reference
(the workers do not run the user's ``__main__``), and cloudpickle pickles functions of
``__main__`` by value, but also follows their globals: ``geomstats.backend`` is a module
built at import time (its name is not in ``sys.modules``) whose functions are not the
numpy ones they claim to be, so plain cloudpickle fails on any loss that uses ``gs``.
``RunPickler`` sends that module and its functions by reference (the workers import
``geomstats.backend`` with the same ``GEOMSTATS_BACKEND``) and everything else as
cloudpickle does: by value for ``__main__``, lambdas and closures, by reference for
importable modules. The run is pickled once; each worker process unpickles it once.
Ray (extra ``flower``) is imported when a run is shipped, so this module imports without it.
"""

import functools
import importlib
import io
import pickle
import types
import uuid

import geomstats.backend as gs

BACKEND_MODULE = "geomstats.backend"
_LOADED = {}


def _backend_function(name):
    return getattr(importlib.import_module(BACKEND_MODULE), name)


@functools.cache
def run_pickler():
    """``RunPickler``: cloudpickle, with ``geomstats.backend`` and its functions by
    reference (the class is made on first use: Ray is an optional dependency)."""
    from ray import cloudpickle

    class RunPickler(cloudpickle.Pickler):
        def reducer_override(self, obj):
            if obj is gs:
                return importlib.import_module, (BACKEND_MODULE,)
            if isinstance(obj, types.FunctionType) and getattr(gs, obj.__name__, None) is obj:
                return _backend_function, (obj.__name__,)
            return super().reducer_override(obj)

    return RunPickler


def dumps(obj):
    """Bytes of ``obj`` by ``run_pickler()``."""
    buffer = io.BytesIO()
    run_pickler()(buffer, protocol=pickle.DEFAULT_PROTOCOL).dump(obj)
    return buffer.getvalue()


class ShippedRun:
    """A run pickled once by value; ``load()`` unpickles it once per process.

    Parameters
    ----------
    run : object
        What the workers need (PriRFed's simulation: the RunSpec and the agents' records).
    """

    def __init__(self, run):
        self.token = uuid.uuid4().hex
        self.payload = dumps(run)

    def load(self):
        """The run (cached per process under a token unique to this run)."""
        if self.token not in _LOADED:
            _LOADED.clear()  # one run at a time per worker: drop the previous one
            _LOADED[self.token] = pickle.loads(self.payload)
        return _LOADED[self.token]

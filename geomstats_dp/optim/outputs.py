"""Output options: which point of a run is its result.

With T steps from w_0 to w_T:

- "last": w_T (Han et al. 2024, Output 1; Utpala et al. 2023, Output I);
- "random": w_k with k uniform on {0, ..., T-1} (Han et al. 2024, Output 2; Utpala et al.
  2023, Output II), drawn before the run so only the chosen iterate is kept;
- "average": the running geodesic average of w_1, ..., w_T (Han et al. 2024, Theorem 2):
  a_1 = w_1, a_k = Exp_{a_(k-1)}(1/k Log_{a_(k-1)}(w_k));
- "weighted_average": the same with coefficient 2/k for k >= 2 (Han et al. 2024,
  Theorem 3), i.e. the Euclidean weights proportional to k - 1.

Han et al. 2024 return the average after w_(T-1); we fold in w_T as well (one more term of
the same recursion). With restarts, the options apply to the last round only (Utpala et al.
2023, Algorithm 12 returns Output II of its last round).
"""

from abc import ABC, abstractmethod

OUTPUTS = ("last", "random", "average", "weighted_average")


class OutputTracker(ABC):
    """Follows the iterates of one round and gives the round's output."""

    def before_step(self, step, point):
        """See w_step, the point step ``step`` starts from."""

    @abstractmethod
    def after_step(self, step, point):
        """See w_(step+1), the point step ``step`` produced."""

    @property
    @abstractmethod
    def point(self):
        """The output so far."""


class LastIterate(OutputTracker):
    """The last iterate."""

    def __init__(self):
        self._point = None

    def after_step(self, step, point):
        """Keep the newest iterate."""
        self._point = point

    @property
    def point(self):
        """w_T."""
        return self._point


class RandomIterate(OutputTracker):
    """w_k for an index k drawn uniformly from {0, ..., T-1} before the round."""

    def __init__(self, index):
        self.index = index
        self._point = None

    def before_step(self, step, point):
        """Keep w_step when step is the chosen index."""
        if step == self.index:
            self._point = point

    def after_step(self, step, point):
        """Nothing to do after a step."""

    @property
    def point(self):
        """w_k."""
        return self._point


class GeodesicAverage(OutputTracker):
    """Running geodesic average a_k = Exp_{a_(k-1)}(c_k Log_{a_(k-1)}(w_k)).

    Parameters
    ----------
    geodesics : Geodesics
        ``interpolate(start, end, t)`` = Exp_start(t Log_start(end)) (``optim.geodesics``).
    power : {1, 2}
        c_k = min(1, power / k): 1 gives the uniform average (Han et al. 2024, Theorem 2), 2 the
        weighted one (Han et al. 2024, Theorem 3).
    """

    def __init__(self, geodesics, power):
        self.geodesics = geodesics
        self.power = power
        self.count = 0
        self._point = None

    def after_step(self, step, point):
        """Fold in the new iterate."""
        self.count += 1
        coefficient = min(1.0, self.power / self.count)
        if coefficient == 1.0:
            self._point = point
        else:
            self._point = self.geodesics.interpolate(self._point, point, coefficient)

    @property
    def point(self):
        """The current average."""
        return self._point


def make_tracker(output, geodesics, n_steps, rng):
    """Return the tracker of ``output`` for a round of ``n_steps`` steps.

    "random" draws its index from ``rng`` here, so the draw happens at the same place
    in every run.
    """
    if output == "last":
        return LastIterate()
    if output == "random":
        return RandomIterate(int(rng.integers(0, n_steps)))
    if output == "average":
        return GeodesicAverage(geodesics, power=1)
    if output == "weighted_average":
        return GeodesicAverage(geodesics, power=2)
    raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")

"""The complete small estimator of docs/dev/architecture.md runs as written and passes
every conformance check but the audit (with its convergence check)."""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "dev" / "architecture.md"


def _example():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)
    assert len(blocks) == 1
    return blocks[0]


@pytest.mark.slow
def test_the_example_estimator_passes_every_check():
    namespace = {}
    exec(compile(_example(), str(PAGE), "exec"), namespace)  # noqa: S102 - the page's example
    fitted = namespace["PrivateClippedMean"](clip_norm=1.0, random_state=0).fit(
        namespace["X"])
    assert fitted.estimate_.shape == (2,)
    assert fitted.method_ == "gaussian"


"""The example of docs/dev/testing.md runs as written."""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "dev" / "testing.md"


@pytest.mark.slow
def test_the_own_estimator_example_passes_every_check():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(PAGE), "exec"), {})  # noqa: S102 - the page's own example

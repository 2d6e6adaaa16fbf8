"""The examples in docs/battle-engine.md run, so they cannot drift from the engine."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[4] / "docs" / "battle-engine.md"


def test_the_python_examples_in_the_engine_doc_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})

"""docs/library.md's Python example is python/examples/solve.py, verbatim (the
tests run the file: python.example.np1/np2)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_doc_example_is_the_file() -> None:
    doc = (ROOT / "docs" / "library.md").read_text()
    section = doc[doc.index("## Python"):]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert block is not None, "docs/library.md: no ```python block under ## Python"
    assert block.group(1) == (ROOT / "python" / "examples" / "solve.py").read_text()

"""The README's first Python snippet runs as printed and scores 1.0."""

import re

from .conftest import ROOT, run_python


def test_first_readme_snippet_scores_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    out = run_python(snippet)
    assert "1.0 True 1.0" in out.splitlines()
    assert "Copenhagen" in out  # the prompt, the API's answer and the transcript

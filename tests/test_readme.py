"""The README's first Python snippet runs as printed and scores 1.0; the docs' getting-started page
opens with the same snippet, so the page's claim is the one checked here."""

import re

from .conftest import ROOT, run_python


def first_python_snippet(path):
    return re.search(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S).group(1)


def test_first_readme_snippet_scores_one():
    snippet = first_python_snippet(ROOT / "README.md")
    out = run_python(snippet)
    assert "1.0 True 1.0" in out.splitlines()
    assert "Copenhagen" in out  # the prompt, the API's answer and the transcript


def test_getting_started_opens_with_the_readme_snippet():
    assert first_python_snippet(ROOT / "docs" / "getting-started.md") == first_python_snippet(ROOT / "README.md")

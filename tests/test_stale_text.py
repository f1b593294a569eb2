"""The package's comments and docstrings say facts: no work state ("TODO", "being built", "for now"),
no issue and no section of a document the repository does not hold ("spec section 3.4")."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolbench"

#: Phrases that name a work state, an issue, or a section of a document outside the repository.
STALE = re.compile(
    r"(?-i:\bTODO\b|\bFIXME\b|\bXXX\b|\bWIP\b)|work in progress"
    r"|being built|\bfor now\b|\blater we\b|comes? next\b|to be done\b"
    r"|\bnot yet (?:built|written|done|implemented|registered|wired)\b"
    r"|\bthe issue\b|\bissue #?\d+|\bissues? \d+'s\b"
    r"|\bspec(?:ification)?s?,? (?:sections?|§|\d)|§\s*\d|\bsections? \d+(?:\.\d+)* of the spec\b",
    re.IGNORECASE,
)

#: (path under toolbench/, phrase in lower case) where the phrase is part of the behaviour, not a note
#: about the work (text a user sees); each must still be found where it is listed.
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def notes(source: str) -> list[tuple[int, str]]:
    """The comments and docstrings of a module's source, with their first line numbers."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.append((first.lineno, first.value.value))
    return found


def stale_phrases(source: str) -> list[tuple[int, str]]:
    """(line, phrase) for each stale phrase in the comments and docstrings of ``source``."""
    return [(line, match.group(0)) for line, text in notes(source) for match in STALE.finditer(text)]


def test_the_check_finds_what_it_looks_for_and_only_in_comments_and_docstrings():
    source = '''"""A module (spec section 3.4), being built."""

def f():
    """Refused for now."""
    message = "TODO: a string the user sees is not a note"
    return message  # TODO: say why (issue 13)


class C:
    """Per the issue."""
'''
    found = [phrase.lower() for _, phrase in stale_phrases(source)]
    assert found == ["todo", "issue 13", "spec section", "being built", "for now", "the issue"]
    assert stale_phrases('"""The workbook spec says raw; an issued ticket."""\nx = "for now"\n') == []


def package_files() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


def test_the_package_s_comments_and_docstrings_name_no_work_state_issue_or_outside_document():
    assert len(package_files()) > 100  # the package, not an empty folder
    found, allowed_seen = [], set()
    for path in package_files():
        name = path.relative_to(PACKAGE).as_posix()
        for line, phrase in stale_phrases(path.read_text(encoding="utf-8")):
            if (name, phrase.lower()) in ALLOWED:
                allowed_seen.add((name, phrase.lower()))
            else:
                found.append(f"toolbench/{name}:{line}: {phrase!r}")
    assert found == [], "\n".join(found)
    assert allowed_seen == ALLOWED  # an entry whose phrase has gone is dropped from the list

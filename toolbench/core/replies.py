"""Finding the code in a model's reply, keeping the reply's line numbers for error messages."""

from __future__ import annotations

_HEADERS = ("action", "actions")  # ToolBench's prompts end with "Action:"; models repeat it


def code_in_reply(text: str) -> str:
    """The code in ``text``: the lines inside Markdown fences when there are any (prose around
    them blanked), else every line. Fence lines and ``Action:`` headers become blank lines, so
    line N of the result is line N of the reply."""
    lines = text.splitlines()
    if "`" not in text and "action" not in text.lower():  # no fence, no header: every line as it is
        return "\n".join(lines)
    fenced = any(line.lstrip().startswith("```") for line in lines)
    kept: list[str] = []
    inside = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            inside = not inside
            kept.append("")
            continue
        is_header = stripped.rstrip(":").lower() in _HEADERS
        kept.append(line if (inside or not fenced) and not is_header else "")
    return "\n".join(kept)

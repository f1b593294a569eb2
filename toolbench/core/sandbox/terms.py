"""The terms every layer of the sandbox shares: a run's budgets, its result, and the reply's checks.

What code is refused with (``CodeError``), what a run may spend (``Limits``) and gives back
(``SandboxResult``), and how the process that started a run reads the child's reply: it never
unpickles anything the child wrote, counts the reply's items before parsing it
(``worker.too_many_items``) and turns anything malformed into an error. This module trusts no
other part of the sandbox; the others take these terms from it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolbench.core.worker import too_many_items

#: The package's name, under which its code-side functions are named (``toolbench.core.sandbox:no_names``)
#: and its stand-in classes say they live, whichever of its modules defines them.
PACKAGE = __name__.rpartition(".")[0]


class CodeError(ValueError):
    """The code is refused before it runs (syntax, imports, dunders...)."""


@dataclass(frozen=True)
class Limits:
    seconds: float = 10.0
    memory_mb: int = 1024  # address space the code may add to what the process already maps
    output_chars: int = 20_000


def budgets(defaults: Limits, time_limit: float | None, memory_limit: int | None) -> Limits:
    """An env's per-step budgets: its defaults, or the seconds and megabytes the user gave."""
    if time_limit is not None and not 0 < time_limit <= 3600:
        raise ValueError(f"time_limit must be in (0, 3600] seconds, not {time_limit!r}")
    if memory_limit is not None and not 64 <= memory_limit <= 65536:
        raise ValueError(f"memory_limit must be from 64 to 65536 MB, not {memory_limit!r}")
    return Limits(
        seconds=defaults.seconds if time_limit is None else float(time_limit),
        memory_mb=defaults.memory_mb if memory_limit is None else int(memory_limit),
        output_chars=defaults.output_chars,
    )


#: The budgets of a run that names none.
DEFAULT_LIMITS = Limits()


@dataclass
class SandboxResult:
    ok: bool
    output: str
    error: str | None
    payload: Any = None
    timed_out: bool = False


MAX_REPLY_BYTES = 8 * 2**20


MAX_ERROR_CHARS = 2_000


def shown(value: Any, render: Callable[[Any], str], limit: int = MAX_ERROR_CHARS) -> str:
    """``render(value)`` cut to ``limit`` characters; never raises (the code's objects may)."""
    try:
        text = render(value)
    except BaseException as exc:  # a __repr__ that raises, or a structure too deep to render
        return f"<cannot be shown: {type(exc).__name__}>"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def parse_reply(data: bytes) -> SandboxResult:
    """The child's reply, checked: agent code could have written to the pipe itself. The counts of
    brackets and separators bound what parsing may build before anything is parsed."""
    if too_many_items(data):
        return SandboxResult(False, "", "the code sent back a malformed result")
    try:
        reply = json.loads(data)
    except (ValueError, RecursionError, MemoryError):
        return SandboxResult(False, "", "the code sent back a malformed result")
    return reply_result(reply)


def reply_result(reply: Any) -> SandboxResult:
    """A parsed reply as a result, its fields checked."""
    try:
        ok, output, error = reply["ok"], reply["output"], reply["error"]
        if not (isinstance(ok, bool) and isinstance(output, str) and (error is None or isinstance(error, str))):
            raise TypeError
    except (KeyError, TypeError):
        return SandboxResult(False, "", "the code sent back a malformed result")
    return SandboxResult(ok, output, error, reply.get("payload"))


def describe_limits(limits: Limits) -> str:
    return f"{limits.seconds:g} s and {limits.memory_mb} MB ({math.ceil(limits.output_chars / 1000)}k chars of output)"

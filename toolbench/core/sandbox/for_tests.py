"""Switches for the sandbox's own tests; nothing in the package sets them.

The tests of the layers behind the guards turn the guards off here, to show that what stays
refused is refused by the later layers alone. The modules that honour a switch read it from this
module at call time, so a test sets it in one place (``monkeypatch.setattr(sandbox.for_tests, ...)``).
Agent code cannot set them: they live in the env's process, which the child never writes to, and
a child inherits them only as the env's process had them when it forked (``run_code``) or sent
them with the job (``run_in_worker``).
"""

from __future__ import annotations

#: Tests only: modules whose attributes pass the guard, so that the tests of the layers behind it
#: can hand agent code ``os`` on purpose. Nothing in the package sets it.
TRUSTED_MODULES_FOR_TESTS: frozenset[str] = frozenset()


# Tests only: the child runs the code as plain Python, with the real builtins and no guards, so the
# security tests can show that the kernel layers hold by themselves. Nothing in the package sets it,
# and agent code cannot: it lives in the env's process, which the child never writes to.
UNGUARDED_FOR_TESTS = False

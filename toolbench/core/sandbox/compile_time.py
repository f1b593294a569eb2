"""Layer 1 of the sandbox, compile time: agent code is checked and compiled before it runs.

RestrictedPython (a maintained, widely used restricted-compilation library) rejects names and
attributes that start with ``_`` (so no ``().__class__.__subclasses__()``), and our own pass
rejects ``import``, ``class`` and assignments to an array's layout with a clear message, and
bounds the syntax tree's size. Two common, harmless forms RestrictedPython refuses are rewritten
first: ``df.loc[m, "c"] += 2`` (augmented assignment to an item or attribute) and annotated
assignments. This runs in the env's process; it trusts nothing of the code, and the later
layers do not trust it to have caught everything.
"""

from __future__ import annotations

import ast
import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from RestrictedPython import compile_restricted_exec

from toolbench.core.sandbox.terms import CodeError

MAX_CODE_CHARS = 65_536
LAST_VALUE = "toolbench_last_value"  # where the last expression of a cell is stored (no leading _)
AGENT_FILE = "<agent code>"


class _Rewrite(ast.NodeTransformer):
    """Turn forms RestrictedPython refuses but that are harmless into ones it accepts."""

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.target, (ast.Subscript, ast.Attribute)):
            load = _as_load(node.target)
            value = ast.BinOp(left=load, op=node.op, right=node.value)
            return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def _as_load(node: ast.expr) -> ast.expr:
    clone = ast.parse(ast.unparse(node), mode="eval").body
    return ast.copy_location(clone, node)


# Setting these on an array in place re-reads its memory under another layout: an object view
# with new strides reads integers as object pointers.
LAYOUT_ATTRIBUTES = frozenset({"strides", "dtype", "data", "shape", "base", "flags"})


#: Bounds on the syntax tree: checking and compiling it runs in the env's process before the run's
#: deadline. RestrictedPython's pass over an attribute or item lookup walks the lookup's whole
#: subtree, so its cost is the sum of those subtrees' sizes (``MAX_LOOKUP_COST``, about 0.1 s).
MAX_NODES = 20_000
MAX_DEPTH = 60
MAX_LOOKUP_COST = 100_000


def _check_size(tree: ast.AST) -> None:
    order, stack = [], [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        order.append(node)
        if len(order) > MAX_NODES:
            raise CodeError(f"the code has more than {MAX_NODES:,} syntax nodes; write it shorter")
        if depth > MAX_DEPTH:
            line = getattr(node, "lineno", "?")
            raise CodeError(f"line {line}: the code is nested more than {MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    sizes: dict[int, int] = {}
    cost = 0
    for node in reversed(order):  # each node after its children
        size = sizes[id(node)] = 1 + sum(sizes[id(child)] for child in ast.iter_child_nodes(node))
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            cost += size
    if cost > MAX_LOOKUP_COST:
        raise CodeError("the code's attribute and item lookups are nested too deeply; use intermediate variables")


def compile_code(code: str, echo_last_expression: bool = False) -> Any:
    """Check and compile agent code; raises ``CodeError`` saying what is not allowed."""
    if len(code) > MAX_CODE_CHARS:
        raise CodeError(f"the code is {len(code)} characters long; the limit is {MAX_CODE_CHARS}")
    try:
        with _quiet_compiler():
            tree = ast.parse(code, filename=AGENT_FILE, mode="exec")
    except SyntaxError as exc:
        raise CodeError(f"line {exc.lineno}: syntax error: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise CodeError(f"the code cannot be parsed: {type(exc).__name__}") from None
    _check_size(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise CodeError(f"line {node.lineno}: import is not allowed; use the names already provided")
        if isinstance(node, ast.ClassDef):
            raise CodeError(f"line {node.lineno}: class definitions are not allowed")
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, (ast.Store, ast.Del))
            and node.attr in LAYOUT_ATTRIBUTES
        ):
            raise CodeError(f"line {node.lineno}: assigning .{node.attr} is not allowed; build a new array instead")
    if echo_last_expression and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(
            ast.Assign(targets=[ast.Name(id=LAST_VALUE, ctx=ast.Store())], value=last.value), last
        )
    try:
        tree = ast.fix_missing_locations(_Rewrite().visit(tree))
        with _quiet_compiler():
            result = compile_restricted_exec(tree, filename=AGENT_FILE)
    except RecursionError:
        raise CodeError("the code is nested too deeply to compile") from None
    except SyntaxError as exc:  # parsed, but not compilable: `return` or `break` out of place, `global` after use...
        raise CodeError(f"line {exc.lineno}: syntax error: {exc.msg}") from None
    except (ValueError, MemoryError) as exc:
        raise CodeError(f"the code cannot be compiled: {type(exc).__name__}") from None
    if result.errors:
        raise CodeError("; ".join(_readable(error) for error in result.errors))
    return result.code


@contextlib.contextmanager
def _quiet_compiler() -> Iterator[None]:
    """The compiler's warnings about agent code (``1.0(x)``: "perhaps you missed a comma?", an invalid
    escape) would go to the env process's stderr, a training run's log; its errors are what counts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _readable(error: str) -> str:
    return error.replace("Line ", "line ", 1)

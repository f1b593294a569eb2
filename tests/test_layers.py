"""The package's floors: every module sits on a layer, imports only from its own layer or lower ones,
and no modules import each other in a circle.

Imports are read with ``ast`` from every module under ``toolbench/``: top-level imports, those inside
functions and ``if TYPE_CHECKING:`` blocks (an annotation that names a higher module is a dependency
all the same), and ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name.
``from package import name`` depends on ``package.name`` when that is a module, else on ``package``.
Strings that merely name a class (the catalog's ``"toolbench.envs.x:XEnv"`` entry points) are not
imports: the catalog names env classes without importing them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "toolbench"

#: The layers, lowest first, each with the modules it holds (a module belongs to the longest prefix
#: that names it). A module may import from its own layer and the ones before it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("toolbench.core", "toolbench.bounded_http", "toolbench.fixtures")),
    ("mock_services", ("toolbench.mock_services",)),
    # The retrievers read the RapidAPI hub and the train split's fixture: the RapidAPI env uses them.
    ("retrieval", ("toolbench.retrieval",)),
    ("envs", ("toolbench.envs",)),
    # The package's front door (``import toolbench``) is the catalog's: it registers the env ids.
    ("catalog", ("toolbench.catalog", "toolbench")),
    # Prompt building needs only tasks; the task generators' alignment data uses its separator.
    ("prompting", ("toolbench.prompting",)),
    ("taskgen", ("toolbench.taskgen",)),
    ("agents", ("toolbench.agents",)),
    ("eval", ("toolbench.eval",)),
    ("services", ("toolbench.integrations", "toolbench.env_server", "toolbench.remote")),
    ("cli", ("toolbench.cli", "toolbench.commands", "toolbench.__main__")),
)
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}


def modules(package: Path) -> dict[str, Path]:
    """Every module of ``package`` by dotted name (a package by its own name, from its ``__init__``)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def layer_of(module: str) -> str | None:
    """The layer whose longest prefix names ``module``, or None."""
    best: tuple[int, str] | None = None
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), name)
    return best[1] if best else None


def _imported_names(node: ast.AST, package: str) -> Iterator[tuple[str, str | None]]:
    """(module, name imported from it or None) for an import node or a literal dynamic import call."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, None
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join([*base, node.module] if node.module else base)
        else:
            module = node.module or ""
        for alias in node.names:
            yield module, alias.name
    elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
            yield node.args[0].value, None


def imports(known: dict[str, Path], root: str) -> dict[str, list[tuple[int, str]]]:
    """Each module's imports of other modules under ``root``: (line, imported module)."""

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    found: dict[str, list[tuple[int, str]]] = {}
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = found.setdefault(module, [])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for name, attribute in _imported_names(node, package):
                if not (name == root or name.startswith(root + ".")):
                    continue
                target = f"{name}.{attribute}" if attribute and f"{name}.{attribute}" in known else resolve(name)
                if target is not None and target != module and (node.lineno, target) not in edges:
                    edges.append((node.lineno, target))
    return found


def upward_imports(graph: dict[str, list[tuple[int, str]]], known: dict[str, Path], base: Path) -> list[str]:
    """``path:line``: what a module imports from a layer above its own (paths relative to ``base``)."""
    found = []
    for module, edges in graph.items():
        for line, target in edges:
            here, there = layer_of(module), layer_of(target)
            if here is not None and there is not None and RANK[there] > RANK[here]:
                where = known[module].relative_to(base)
                found.append(f"{where}:{line}: {module} ({here}) imports {target} ({there})")
    return found


def cycles(graph: dict[str, list[tuple[int, str]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    successors = {module: sorted({target for _, target in edges}) for module, edges in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(successors):
        if start in index:
            continue
        work = [(start, iter(successors[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, pending = work[-1]
            for target in pending:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(successors.get(target, ()))))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def cycle_text(component: list[str], graph: dict[str, list[tuple[int, str]]]) -> str:
    """A circle's modules and the imports between them (``a:12 -> b``)."""
    members = set(component)
    arrows = [f"{module}:{line} -> {target}" for module in component for line, target in graph[module]
              if target in members]  # fmt: skip
    return f"{', '.join(component)}\n    " + "\n    ".join(arrows)


@pytest.fixture(scope="module")
def package() -> tuple[dict[str, Path], dict[str, list[tuple[int, str]]]]:
    known = modules(PACKAGE)
    return known, imports(known, "toolbench")


def test_every_module_sits_on_a_layer(package):
    known, _ = package
    assert [module for module in known if layer_of(module) is None] == []


def test_no_module_imports_from_a_layer_above_its_own(package):
    known, graph = package
    found = upward_imports(graph, known, PACKAGE.parent)
    order = " < ".join(name for name, _ in LAYERS)
    assert not found, f"imports from a higher layer ({order}):\n" + "\n".join(found)


def test_no_modules_import_each_other_in_a_circle(package):
    _, graph = package
    found = cycles(graph)
    assert not found, "modules in a circle of imports:\n" + "\n".join(cycle_text(c, graph) for c in found)


def test_the_checks_find_an_upward_import_a_lazy_one_and_a_circle(tmp_path):
    """A made-up package with the faults the checks are for: they must name each one."""
    root = tmp_path / "toolbench"
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/a.py": "def f():\n    from toolbench.eval import b\n",  # lazy and upward
        "core/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n",
        "core/d.py": "import importlib\nimportlib.import_module('toolbench.core.c')\n",
        "eval/__init__.py": "",
        "eval/b.py": "from toolbench.core import a, c\nfrom toolbench.core.d import x\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    known = modules(root)
    graph = imports(known, "toolbench")
    assert graph["toolbench.eval.b"] == [(1, "toolbench.core.a"), (1, "toolbench.core.c"), (2, "toolbench.core.d")]
    assert upward_imports(graph, known, tmp_path) == [
        "toolbench/core/a.py:2: toolbench.core.a (core) imports toolbench.eval.b (eval)"
    ]
    assert sorted(cycles(graph)) == [["toolbench.core.a", "toolbench.eval.b"], ["toolbench.core.c", "toolbench.core.d"]]

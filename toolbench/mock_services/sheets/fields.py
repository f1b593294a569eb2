"""Field masks: the ``fields`` query parameter that trims responses, and ``fields`` in update requests.

Syntax as Google APIs take it: ``a,b.c,d/e,f(g,h(i)),*``. A parsed mask is a tree
``{name: subtree}`` where ``True`` selects the whole value. Lists are transparent: the mask of
``sheets.properties`` applies to every sheet.
"""

from __future__ import annotations

import copy
from typing import Any, Union

from toolbench.mock_services.sheets.errors import invalid

Tree = dict[str, Union["Tree", bool]]
_MISSING = object()


def parse_mask(text: str) -> Tree:
    """``"sheets(properties,data.rowData)"`` -> ``{"sheets": {"properties": True, "data": {"rowData": True}}}``."""
    tree: Tree = {}
    position = _parse_list(text.replace(" ", ""), 0, tree)
    if position != len(text.replace(" ", "")):
        raise invalid(f"Invalid field selection {text}")
    return tree


def _merge(tree: Tree, path: list[str], leaf: Tree | bool) -> None:
    node = tree
    for name in path[:-1]:
        child = node.get(name)
        if child is True:
            return
        if not isinstance(child, dict):
            child = node[name] = {}
        node = child
    last = path[-1]
    existing = node.get(last)
    if existing is True or leaf is True:
        node[last] = True
    elif isinstance(existing, dict) and isinstance(leaf, dict):
        for key, value in leaf.items():
            _merge(existing, [key], value)
    else:
        node[last] = leaf


def _parse_list(text: str, position: int, tree: Tree) -> int:
    while position < len(text):
        start = position
        while position < len(text) and text[position] not in ",()":
            position += 1
        path = [part for part in text[start:position].replace("/", ".").split(".")]
        if any(not part for part in path):
            raise invalid(f"Invalid field selection {text}")
        if position < len(text) and text[position] == "(":
            sub: Tree = {}
            position = _parse_list(text, position + 1, sub)
            if position >= len(text) or text[position] != ")":
                raise invalid(f"Invalid field selection {text}")
            position += 1
            _merge(tree, path, sub)
        else:
            _merge(tree, path, True)
        if position < len(text) and text[position] == ",":
            position += 1
            continue
        break
    return position


def project(value: Any, tree: Tree | bool) -> Any:
    """``value`` trimmed to the fields selected by ``tree``."""
    if tree is True:
        return value
    if isinstance(value, list):
        return [project(item, tree) for item in value]
    if not isinstance(value, dict):
        return value
    assert isinstance(tree, dict)
    if "*" in tree:
        return value
    out = {}
    for key, sub in tree.items():
        if key in value:
            out[key] = project(value[key], sub)
    return out


def selects(tree: Tree, *path: str) -> bool:
    """Whether the mask selects anything under ``path`` (``selects(t, "sheets", "data")``)."""
    node: Tree | bool = tree
    for name in path:
        if node is True:
            return True
        assert isinstance(node, dict)
        if "*" in node:
            return True
        if name not in node:
            return False
        node = node[name]
    return True


def mask_paths(text: str) -> list[list[str]]:
    """An update mask as a list of paths (``"userEnteredFormat(numberFormat,textFormat.bold)"``)."""
    tree = parse_mask(text)
    paths: list[list[str]] = []

    def walk(node: Tree, prefix: list[str]) -> None:
        for key, sub in node.items():
            if isinstance(sub, dict):
                walk(sub, prefix + [key])
            else:
                paths.append(prefix + [key])

    walk(tree, [])
    return paths


def get_path(data: dict[str, Any], path: list[str]) -> Any:
    node: Any = data
    for name in path:
        if not isinstance(node, dict) or name not in node:
            return _MISSING
        node = node[name]
    return node


def apply_mask(
    target: dict[str, Any], source: dict[str, Any], paths: list[list[str]], top_fields: tuple[str, ...]
) -> None:
    """Copy each masked path from ``source`` into ``target``; a path absent in ``source`` is cleared.

    ``*`` stands for every field in ``top_fields`` (the fields of the message being updated).
    """
    expanded: list[list[str]] = []
    for path in paths:
        if path == ["*"]:
            expanded.extend([name] for name in top_fields)
        else:
            expanded.append(path)
    for path in expanded:
        value = get_path(source, path)
        node = target
        for name in path[:-1]:
            child = node.get(name)
            if not isinstance(child, dict):
                if value is _MISSING:
                    node = None  # type: ignore[assignment]
                    break
                child = node[name] = {}
            node = child
        if node is None:
            continue
        if value is _MISSING or value is None:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = copy.deepcopy(value)
    _drop_empty(target)


def _drop_empty(node: dict[str, Any]) -> None:
    for key in list(node):
        child = node[key]
        if isinstance(child, dict) and key not in ("foregroundColor", "backgroundColor", "color", "rgbColor"):
            _drop_empty(child)
            if not child:
                del node[key]

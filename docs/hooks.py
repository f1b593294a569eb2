"""MkDocs hooks: the pages this site writes at build time from the package itself.

- The CLI reference (``reference/cli.md``) gets every command's ``--help``, from the command line's
  own parser, in place of its marker line, so it cannot drift from what ``toolbench CMD --help`` prints.
- The API reference gets a page per package of ``toolbench``, found by walking the package's folders,
  so a module that moves or appears is documented where it now is without editing a list here.
- Each env page gets its env class's docstring (the Gymnasium sections), found through the catalog.
- The example scripts' plots under ``examples/`` are served at ``examples/`` beside the pages that show
  them, so the pictures are not kept twice.

``tests/test_docs.py`` imports this module to compare the CLI page with ``--help``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "toolbench"
CLI_MARKER = "<!-- cli-help -->"
ENV_MARKER = re.compile(r"<!-- env-docstring: (\w+) -->")
#: ``--help`` is formatted for a terminal this wide, in the page and in the test that compares them.
HELP_COLUMNS = 80
API_DIR = "reference/api"
#: Packages whose modules are listed with their summaries, not rendered member by member: their
#: modules are back ends and generators, used through the envs and ``python -m toolbench.taskgen``.
SUMMARY_ONLY = {"mock_services", "taskgen", "fixtures"}
#: Top-level imports that come with an optional extra, and the extra that brings them.
EXTRA_OF_IMPORT = {
    "ray": "ray",
    "trl": "trl",
    "transformers": "trl",
    "torch": "trl",
    "datasets": "trl",
    "verifiers": "verifiers",
    "skyrl_gym": "skyrl",
    "openenv": "openenv",
}


# ---- the CLI reference -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``toolbench`` command's parser, as the command builds it."""
    from toolbench.cli import build_parser as build

    return build()


@contextmanager
def help_width(columns: int = HELP_COLUMNS) -> Iterator[None]:
    """argparse wraps help to the terminal's width (``COLUMNS``): fix it while formatting."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def commands(parser: argparse.ArgumentParser | None = None) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and sub-command, depth first in the parser's order: (words after ``toolbench``, parser)."""
    found: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []

    def walk(words: tuple[str, ...], current: argparse.ArgumentParser) -> None:
        found.append((words, current))
        seen: set[int] = set()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if id(sub) not in seen:  # an alias names the same parser again
                        seen.add(id(sub))
                        walk((*words, name), sub)

    walk((), parser or build_parser())
    return found


def cli_sections() -> list[tuple[tuple[str, ...], str]]:
    """Each command's words and the text its ``--help`` prints."""
    with help_width():
        return [(words, sub.format_help()) for words, sub in commands()]


def cli_markdown() -> str:
    """The CLI reference's generated part: a heading and a ``--help`` block per command."""
    parts = []
    for words, text in cli_sections():
        level = "#" * min(2 + max(len(words) - 1, 0), 4)
        title = " ".join(("toolbench", *words))
        parts.append(f"{level} `{title}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


def help_blocks(markdown: str) -> dict[str, str]:
    """The ``--help`` blocks of a CLI page, by command (``"toolbench data align"``)."""
    pattern = re.compile(r"^#{2,4} `(toolbench[^`]*)`\n\n```text\n(.*?)\n```$", re.M | re.S)
    return {title: text for title, text in pattern.findall(markdown)}


# ---- the API reference ---------------------------------------------------------------------------


def _docstring(path: Path) -> str:
    """A module's docstring, read without importing it (an extra's module imports its extra)."""
    try:
        return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except SyntaxError:
        return ""


def summary(path: Path) -> str:
    """A module's first docstring paragraph, on one line (table cells hold no line breaks)."""
    first = _docstring(path).split("\n\n", 1)[0]
    return " ".join(first.split()).replace("|", "\\|")


def extras_needed(path: Path) -> list[str]:
    """The optional extras a module imports, anywhere in it (``import trl`` inside a function counts)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return []
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return sorted({EXTRA_OF_IMPORT[root] for root in roots if root in EXTRA_OF_IMPORT})


def public_packages() -> list[str]:
    """``toolbench`` and its public sub-packages (one level down): the API reference's pages."""
    names = ["toolbench"]
    for child in sorted(PACKAGE.iterdir()):
        if (child / "__init__.py").is_file() and not child.name.startswith("_") and child.name != "fixtures":
            names.append(f"toolbench.{child.name}")
    return names


def modules_of(package: str) -> list[tuple[str, Path]]:
    """The public modules of a package, sub-packages' modules included (the root: its own modules
    only, each sub-package having its page). Dotted names and files, in name order."""
    folder = PACKAGE.parent.joinpath(*package.split("."))
    found = []
    for path in sorted(folder.rglob("*.py") if package != "toolbench" else folder.glob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if any(part.startswith("_") for part in parts[:-1]) or "fixtures" in parts:
            continue
        if parts[-1] == "__main__" or (parts[-1].startswith("_") and parts[-1] != "__init__"):
            continue
        if parts[-1] == "__init__":
            if path.parent == folder:
                continue  # the package itself heads its page
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def api_page(package: str) -> str:
    """The markdown of one package's page: its docstring and exported names, a table of its
    modules, then each module's public members (but for the packages in ``SUMMARY_ONLY``)."""
    short = package.split(".", 1)[1] if "." in package else package
    init = PACKAGE.parent.joinpath(*package.split("."), "__init__.py")
    lines = [f"# `{package}`", ""]
    needs = extras_needed(init)
    if needs:
        lines += [f"Needs the {', '.join(f'`{extra}`' for extra in needs)} extra.", ""]
    lines += [f"::: {package}", "    options:", "      show_root_heading: false", "      show_submodules: false", ""]
    modules = modules_of(package)
    if modules:
        lines += ["## Modules", "", "| module | what it is | needs |", "|---|---|---|"]
        for name, path in modules:
            extras = ", ".join(f"`{extra}`" for extra in extras_needed(path))
            lines.append(f"| `{name}` | {summary(path)} | {extras} |")
        lines.append("")
    if short not in SUMMARY_ONLY:
        for name, path in modules:
            if path.name == "__init__.py":
                continue  # a sub-package: its modules follow
            lines += [f"::: {name}", "    options:", "      show_submodules: false", "      heading_level: 2", ""]
    return "\n".join(lines)


def api_index() -> str:
    """The API reference's first page: one line per package."""
    lines = [
        "# API reference",
        "",
        "Generated from the package's docstrings when the site is built (mkdocstrings reads the source;",
        "nothing is imported, so a module that needs an optional extra is documented without it and",
        "marked with the extra it needs). The names most code uses: `toolbench.TASKS`, `load_tasks`,",
        "`BatchedVectorEnv`, `RayVectorEnv` ([`toolbench`](toolbench.md)), the base env `ToolEnv`",
        "([`toolbench.core`](core.md)), `make_agent` ([`toolbench.agents`](agents.md)), `evaluate`",
        "([`toolbench.eval`](eval.md)), and the trainer adapters' `Session`, `task_rows` and",
        "`environment_factory` ([`toolbench.integrations`](integrations.md)).",
        "",
        "| package | what it is |",
        "|---|---|",
    ]
    for package in public_packages():
        init = PACKAGE.parent.joinpath(*package.split("."), "__init__.py")
        lines.append(f"| [`{package}`]({_page_name(package)}) | {summary(init)} |")
    return "\n".join(lines) + "\n"


def _page_name(package: str) -> str:
    return (package.split(".", 1)[1] if "." in package else package) + ".md"


# ---- MkDocs events -------------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """Fill the nav's "API reference" entry with a page per package found now."""
    pages = [f"{API_DIR}/index.md"] + [f"{API_DIR}/{_page_name(p)}" for p in public_packages()]
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and "Reference" in entry:
            for item in entry["Reference"]:
                if isinstance(item, dict) and "API reference" in item:
                    item["API reference"] = pages
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the generated API pages and the example scripts' plots to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, f"{API_DIR}/index.md", content=api_index()))
    for package in public_packages():
        files.append(File.generated(config, f"{API_DIR}/{_page_name(package)}", content=api_page(package)))
    for picture in sorted((ROOT / "examples").glob("*.png")):
        files.append(File(f"examples/{picture.name}", str(ROOT), config["site_dir"], config["use_directory_urls"]))
    return files


def env_reference(task: str) -> str:
    """The mkdocstrings block that shows a task's env class docstring (its Gymnasium sections)."""
    from toolbench.catalog import find_task

    module, _, name = find_task(task).entry_point.partition(":")
    return "\n".join([
        f"::: {module}.{name}",
        "    options:",
        "      show_root_heading: false",
        "      show_root_toc_entry: false",
        "      members: false",
        "      show_bases: false",
        "      heading_level: 3",
    ])  # fmt: skip


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Write the CLI reference and the env docstrings into their pages."""
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_markdown())
    return ENV_MARKER.sub(lambda match: env_reference(match.group(1)), markdown)

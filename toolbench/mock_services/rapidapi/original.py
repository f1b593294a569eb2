"""The original ToolBench / StableToolBench data (query files, the response cache), served offline.

- ``read_query_file``: the released query files (``G*_query.json``, StableToolBench's solvable test
  sets, the minimal inference format), checked and normalized, optionally kept to a test-id file.
- ``ResponseCache``: StableToolBench's response cache directory, read with the virtual server's file
  layout and keys, so its recorded responses can be replayed without a network.
- ``simulate_response``: a deterministic placeholder where the server would ask GPT: a response with
  the shape of the API's ``template_response``, its values made up from a hash of the call (a key's
  name and a number, or the input echoed), so nothing an answer could rest on.
- ``OriginalBackend``: a cache hit if there is one, else a placeholder, for the APIs of a query; it
  says which (``CACHE``, ``PLACEHOLDER``), so a run can count how many of its calls were answered.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .functions import change_name, standardize

MAX_DEPTH = 8  # containers deeper than this come out empty
MAX_ITEMS = 200  # nodes a simulated response may hold beyond its root
MAX_LIST = 5  # items of a simulated list, whatever the template's length says
MAX_CACHE_FILE = 64 * 1024 * 1024  # bytes; larger cache files are not read
# Where a call's response came from: StableToolBench's recorded response, our hub's service for the
# API (a simulation with a consistent world behind it), or a placeholder that only has the API's shape.
CACHE, SIMULATED, PLACEHOLDER = "cache", "simulated", "placeholder"
CALL_SOURCES = (CACHE, SIMULATED, PLACEHOLDER)


@dataclass(frozen=True)
class SourceTally:
    """Where the calls of a set of episodes got their responses (from each info's ``call_sources``)."""

    episodes: int  # episodes that record their calls' sources
    calls: int
    cached: int
    placeholders: int
    with_placeholder: int  # episodes where some call got a placeholder


def tally_sources(infos: Iterable[Mapping[str, Any]]) -> SourceTally:
    sources = [info["call_sources"] for info in infos if isinstance(info.get("call_sources"), dict)]
    return SourceTally(
        episodes=len(sources),
        calls=sum(sum(counts.values()) for counts in sources),
        cached=sum(counts.get(CACHE, 0) for counts in sources),
        placeholders=sum(counts.get(PLACEHOLDER, 0) for counts in sources),
        with_placeholder=sum(bool(counts.get(PLACEHOLDER)) for counts in sources),
    )


LIST_LENGTH = "_list_length"

_NAMES = ("category_name", "tool_name", "api_name")
_LIST_OF = re.compile(r"list of (\w+) with length (\d+)")
_LABELS = ("name", "title", "query", "keyword", "keywords", "term", "label", "text")  # keys that echo an input


# --- query files ---------------------------------------------------------------------------------


def read_query_file(path: str | Path, ids_file: str | Path | None = None) -> list[dict[str, Any]]:
    """The query records of a ToolBench / StableToolBench instruction file, in file order.

    Each record keeps its keys; ``query`` becomes a string (a list keeps its first item, as ToolBench's
    preprocessing does) and ``query_id`` an int. With ``ids_file`` (``{"<query_id>": 0, ...}``) only
    the listed queries are kept. A file or record of the wrong shape raises ValueError.
    """
    records = _load_json(path)
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of query records, got {type(records).__name__}")
    keep = None
    if ids_file is not None:
        ids = _load_json(ids_file)
        if not isinstance(ids, dict):
            raise ValueError(f'{ids_file}: expected a JSON object {{"<query_id>": 0, ...}}')
        keep = {str(key) for key in ids}
    queries = [_query_record(record, f"{path}: record {index}") for index, record in enumerate(records)]
    return [query for query in queries if keep is None or str(query["query_id"]) in keep]


def _load_json(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"{path}: not a JSON file ({error})") from error


def _query_record(record: Any, where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected an object, got {type(record).__name__}")
    query = record.get("query")
    if isinstance(query, list) and query:
        query = query[0]
    if not isinstance(query, str):
        raise ValueError(f"{where}: 'query' must be a string (or a non-empty list of strings)")
    query_id = record.get("query_id")
    if isinstance(query_id, str) and query_id.isdigit():
        query_id = int(query_id)
    if not isinstance(query_id, int) or isinstance(query_id, bool):
        raise ValueError(f"{where}: 'query_id' must be an integer")
    out = {**record, "query": query, "query_id": query_id}
    if "api_list" in record:  # absent in the open-domain format, where a retriever picks the APIs
        apis = record["api_list"]
        if not isinstance(apis, list) or not all(
            isinstance(api, dict) and all(isinstance(api.get(name), str) for name in _NAMES) for api in apis
        ):
            raise ValueError(f"{where}: 'api_list' must list objects with string {', '.join(_NAMES)}")
        out["api_list"] = [dict(api) for api in apis]
    if "relevant APIs" in record:
        pairs = record["relevant APIs"]
        if not isinstance(pairs, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(name, str) for name in pair) for pair in pairs
        ):
            raise ValueError(f"{where}: 'relevant APIs' must list [tool_name, api_name] pairs")
        out["relevant APIs"] = [list(pair) for pair in pairs]
    return out


# --- StableToolBench's response cache --------------------------------------------------------------


def standard_category(name: str) -> str:
    """A category's directory name, as StableToolBench's ``standardize_category`` makes it."""
    # One pass of "__" -> "_" only, as upstream: a run of three underscores keeps two.
    return name.replace(" ", "_").replace(",", "_").replace("/", "_").replace("__", "_")


MAX_OPEN_FILES = 64  # cache files kept in memory at once


class ResponseCache:
    """Read-only view of a StableToolBench response cache (``tool_response_cache``).

    A file per API, ``{cache}/{category}/{tool}_for_{category}/{api}.json``, maps ``str(tool_input)``
    (the Python repr of the parsed arguments, as the virtual server writes it) to a response body.
    Files are read on first use and kept; missing, oversized or broken files count as empty.
    Returned bodies are shared with the cache: callers must not change them.
    """

    def __init__(self, cache_dir: str | Path) -> None:
        self.root = Path(cache_dir)
        self._files: dict[Path, dict[str, Any]] = {}

    def path(self, category: str, tool_name: str, api_name: str) -> Path | None:
        """The cache file of an API, named as the virtual server names it (None if not a safe name)."""
        category = standard_category(category)
        api = change_name(standardize(api_name)).split(f"_for_{tool_name}")[0]
        tool = tool_name if tool_name.endswith(f"_for_{category}") else f"{standardize(tool_name)}_for_{category}"
        parts = (category, tool, f"{api}.json")
        # Names come from the caller (an agent, ultimately): keep every part a plain file name.
        if any(part in ("", ".", "..") or any(c in part for c in "/\\\0") for part in parts):
            return None
        return self.root.joinpath(*parts)

    def lookup(self, category: str, tool_name: str, api_name: str, tool_input: dict[str, Any]) -> dict[str, Any] | None:
        """The cached body of this call, or None."""
        path = self.path(category, tool_name, api_name)
        if path is None:
            return None
        if path not in self._files:
            if len(self._files) >= MAX_OPEN_FILES:  # bounded memory: forget the file read first
                del self._files[next(iter(self._files))]
            self._files[path] = _read_cache_file(path)
        hit = self._files[path].get(str(tool_input))
        return hit if isinstance(hit, dict) else None


def _read_cache_file(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_CACHE_FILE:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


# --- the simulator --------------------------------------------------------------------------------


def simulate_response(api: Mapping[str, Any], arguments: Mapping[str, Any]) -> Any:
    """A response to ``arguments`` shaped like ``api["template_response"]``; the same call always gives it.

    The template is ToolBench's type skeleton (``"str"``, ``"int"``, ``[{..., "_list_length": n}]``,
    ``["list of str with length n"]``, ...). Lists get at most 5 items, containers below depth 8 come
    out empty and at most 200 nodes are made. Without a dict or list template (absent, or the cut-off
    JSON text some records hold) the response is a small generic object.
    """
    names = [str(api.get(name, "")) for name in _NAMES]
    arguments = arguments if isinstance(arguments, Mapping) else {}
    # Seed from canonical JSON, never hash() or random: identical in every process and platform.
    seed = hashlib.sha256(_canonical([*names, arguments]).encode("ascii")).digest()
    builder = _Builder(seed, arguments)
    template = api.get("template_response")
    if isinstance(template, (dict, list)):
        return builder.build(template, "", 0)
    try:
        echo = json.loads(_canonical(arguments))  # a JSON-safe copy of the arguments
    except (ValueError, RecursionError):
        echo = None
    return {
        "message": f"{names[2]} of {names[1]} answered the request.",
        "query": echo if isinstance(echo, dict) else {},
        "result": builder.leaf("str", standardize(names[2]) or "result"),
    }


def _canonical(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=_plain)
    except (TypeError, ValueError, RecursionError):  # unsortable keys, a cycle, absurd depth
        return json.dumps(f"<{type(value).__name__}>")


def _plain(value: Any) -> Any:
    # Sets print in hash order, which changes between processes: sort them.
    return sorted(map(str, value)) if isinstance(value, (set, frozenset)) else str(value)


class _Builder:
    """Fills one template; every leaf draws the next hash of the seed, so the output is reproducible."""

    def __init__(self, seed: bytes, arguments: Mapping[str, Any]) -> None:
        self.seed, self.count, self.budget = seed, 0, MAX_ITEMS
        self.inputs: dict[str, Any] = {}  # standardized argument name -> scalar value, in name order
        for name, value in sorted(arguments.items(), key=lambda item: str(item[0])):
            if isinstance(value, (str, int, float)):
                self.inputs.setdefault(standardize(str(name)), value)
        self.text = next((v for v in self.inputs.values() if isinstance(v, str) and v), None)

    def number(self) -> int:
        self.count += 1
        return int.from_bytes(hashlib.sha256(self.seed + self.count.to_bytes(8, "big")).digest()[:8], "big")

    def take(self) -> bool:
        self.budget -= 1
        return self.budget >= 0

    def build(self, template: Any, key: str, depth: int) -> Any:
        # Depth is bounded by MAX_DEPTH, so even a 10,000-deep or cyclic template cannot exhaust the stack.
        if isinstance(template, dict):
            out: dict[str, Any] = {}
            for name, sub in template.items() if depth < MAX_DEPTH else ():
                if name == LIST_LENGTH:
                    continue
                if not self.take():
                    break
                out[str(name)] = self.build(sub, str(name), depth + 1)
            return out
        if isinstance(template, list):
            items: list[Any] = []
            for sub in _list_items(template) if depth < MAX_DEPTH else ():
                if not self.take():
                    break
                items.append(self.build(sub, key, depth + 1))
            return items
        kind = template if isinstance(template, str) else "NoneType" if template is None else type(template).__name__
        return self.leaf(kind, key)

    def leaf(self, kind: str, key: str) -> Any:
        given = self.inputs.get(standardize(key))
        if kind == "NoneType":
            return None
        if kind in ("empty list", "list"):
            return []
        if kind == "dict":
            return {}
        if kind == "bool":
            return given if isinstance(given, bool) else bool(self.number() & 1)
        if kind == "int":
            return given if isinstance(given, int) and not isinstance(given, bool) else self.number() % 10_000
        if kind == "float":
            if isinstance(given, (int, float)) and not isinstance(given, bool):
                return float(given)
            return round(self.number() % 1_000_000 / 100, 2)
        # "str" and any type name we do not know: a string that echoes the input or names its key.
        if given is not None and not isinstance(given, bool):
            return str(given)
        short = standardize(key)
        if self.text is not None and (short == "q" or short.endswith(_LABELS)):
            return self.text
        return f"{key[:40] or 'value'}-{self.number() % 16**8:08x}"


def _list_items(template: list[Any]) -> list[Any]:
    """The item templates of a list template, with ToolBench's length markers expanded (at most 5)."""
    if len(template) == 1 and isinstance(template[0], dict) and LIST_LENGTH in template[0]:
        length = template[0][LIST_LENGTH]
        count = length if isinstance(length, int) and not isinstance(length, bool) and length >= 0 else 1
        return [template[0]] * min(count, MAX_LIST)
    if len(template) == 1 and isinstance(template[0], str) and (match := _LIST_OF.fullmatch(template[0])):
        digits = match[2]  # int() of a huge digit string would raise; any long one is over the cap anyway
        return [match[1]] * (min(int(digits), MAX_LIST) if len(digits) < 6 else MAX_LIST)
    return template


# --- the backend ----------------------------------------------------------------------------------


class OriginalBackend:
    """Answers a query's API calls offline: the response cache first, else the simulator.

    ``call`` returns the ``{"error", "response"}`` body and where it came from: ``CACHE``, or
    ``PLACEHOLDER`` for the schema stand-in and for an API that is neither cached nor in ``api_list``
    (with the body ToolBench's server gives such calls). The cache, like the virtual server, answers
    any API it holds, listed or not.
    """

    def __init__(self, api_list: list[dict[str, Any]], cache_dir: str | Path | ResponseCache | None = None) -> None:
        # A ResponseCache may be shared by many backends (an env's episodes), so files are read once.
        shared = isinstance(cache_dir, ResponseCache) or cache_dir is None
        self.cache = cache_dir if shared else ResponseCache(cache_dir)  # type: ignore[arg-type]
        self._apis: dict[tuple[str, str], dict[str, Any]] = {}
        for api in api_list:
            self._apis.setdefault(_api_key(str(api.get("tool_name", "")), str(api.get("api_name", ""))), api)

    def call(
        self, category: str, tool_name: str, api_name: str, tool_input: dict[str, Any]
    ) -> tuple[dict[str, Any], str]:
        if self.cache is not None:
            hit = self.cache.lookup(category, tool_name, api_name, tool_input)
            if hit is not None:
                return hit, CACHE
        api = self._apis.get(_api_key(tool_name, api_name))
        if api is None:
            return {"error": "", "response": {"message": "API doesn't exists"}}, PLACEHOLDER  # ToolBench's words
        return {"error": "", "response": simulate_response(api, tool_input)}, PLACEHOLDER


def _api_key(tool_name: str, api_name: str) -> tuple[str, str]:
    # change_name(standardize()) is idempotent, so raw names and function-style names both match.
    return standardize(tool_name), change_name(standardize(api_name))

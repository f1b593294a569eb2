"""The API calls a program makes, as ToolBench's complexity score counts them (appendix D.2.1).

The score needs two things per task: the set D of API options and, for each program, the multiset
of options it calls (a function called twice counts twice, D.1.1). D depends on the task:

- curl tasks (those whose env takes curl commands: OpenWeather, the Cat API): every valid
  URL-with-parameters shape is one option. A shape is the method, the documented path and the set
  of parameter names (query and JSON body, the API key left out); a documented endpoint with k
  optional parameters has 2**k valid shapes. The paper's own docs give 37 and 52 options; ours are
  worded and cut differently, so our counts differ (``api_space(...).size`` says how many).
- the other tasks: the documented functions, every name the API docs' code lines call; a call in
  a program is a use of one of those names (so a Python ``x.get(...)`` in a Google Sheets program
  counts as gspread's ``get``: names are all the docs give).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from toolbench.prompting import split_api_docs

#: A shape of a curl call: (method, documented path, parameter names).
Shape = tuple[str, str, frozenset[str]]

_URL = re.compile(r"""['"]?(https?://[^\s'"]+)""")
_METHOD = re.compile(r"(?:-X|--request)\s+['\"]?([A-Za-z]+)")
_DATA = re.compile(r"""(?:^|\s)(?:-d|-data|--data(?:-raw|-binary)?)\s+'([^']*)'""")
_JSON_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_ACTION = re.compile(r"^[ \t]*([a-z_]+)\[", re.MULTILINE)
_PARAM_NAMES = re.compile(r"([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_]\w*)*):\s*\((required|optional)\)")
#: Parameters every call carries whatever it asks: not part of a call's shape.
_KEY_PARAMS = frozenset({"appid", "api_key"})


@dataclass(frozen=True)
class CurlCall:
    method: str
    path: str
    params: frozenset[str]


def parse_curl_call(line: str) -> CurlCall | None:
    """Method, URL path and parameter names (query and JSON body) of one ``curl`` line."""
    url = _URL.search(line)
    if not url:
        return None
    method = _METHOD.search(line)
    data = _DATA.search(line)
    verb = method.group(1).upper() if method else ("POST" if data else "GET")
    address = url.group(1)
    path, _, query = address.partition("?")
    path = re.sub(r"^https?://[^/]+", "", path).rstrip("/") or "/"
    params = {pair.split("=", 1)[0] for pair in query.split("&") if pair and not pair.startswith("{")}
    if data:
        body = data.group(1)
        try:
            loaded = json.loads(body)
            params |= set(loaded) if isinstance(loaded, dict) else set()
        except ValueError:
            params |= set(_JSON_KEY.findall(body))
    return CurlCall(verb, path, frozenset(params) - _KEY_PARAMS)


@dataclass(frozen=True)
class _Endpoint:
    method: str
    path: str
    pattern: re.Pattern[str]
    required: frozenset[str]
    optional: tuple[str, ...]

    def shapes(self) -> list[Shape]:
        chosen = (
            combo for size in range(len(self.optional) + 1) for combo in itertools.combinations(self.optional, size)
        )
        return [(self.method, self.path, self.required | frozenset(combo)) for combo in chosen]


def _endpoint(block: str) -> _Endpoint | None:
    curl = next((line.strip() for line in block.splitlines() if line.strip().startswith("curl")), None)
    call = parse_curl_call(curl) if curl else None
    if call is None:
        return None
    marked = {}
    for names, kind in _PARAM_NAMES.findall(block):
        for name in re.split(r"\s*,\s*", names):
            marked[name] = kind
    optional = tuple(sorted(name for name, kind in marked.items() if kind == "optional" and name not in _KEY_PARAMS))
    required = frozenset(call.params - set(optional))
    pattern = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(call.path)) + "$")
    return _Endpoint(call.method, call.path, pattern, required, optional)


class ApiSpace:
    """A task's API options D and the options a program calls."""

    def __init__(self, options: Sequence[Hashable], size: int | None = None) -> None:
        self.options = list(options)
        self.size = size if size is not None else len(self.options)

    def calls(self, program: str) -> Counter[Hashable]:
        raise NotImplementedError


class CurlShapes(ApiSpace):
    """D = every valid URL-with-parameters shape of the documented endpoints (D.2.1)."""

    def __init__(self, docs: str, size: int | None = None) -> None:
        self.endpoints = [e for e in map(_endpoint, split_api_docs(docs)) if e is not None]
        super().__init__([shape for e in self.endpoints for shape in e.shapes()], size)

    def calls(self, program: str) -> Counter[Hashable]:
        found: Counter[Hashable] = Counter()
        for line in program.splitlines():
            call = parse_curl_call(line) if line.strip().startswith("curl") else None
            if call is None:
                continue
            # A call's path is named by the documented path it fills in (``/v1/votes/{vote_id}``);
            # an undocumented path or parameter set is still a call, just not one of D.
            matching = (e.path for e in self.endpoints if e.method == call.method and e.pattern.match(call.path))
            found[(call.method, next(matching, call.path), call.params)] += 1
        return found


class NamedFunctions(ApiSpace):
    """D = the documented functions: every name the API docs' code lines call (``API.search()``,
    ``worksheet.update_cell(...)``) or use as a bracketed action at a line's start (``search[...]``)."""

    def __init__(self, docs: str, size: int | None = None) -> None:
        names: dict[str, None] = {}
        for block in split_api_docs(docs):
            code = "\n".join(line for line in block.splitlines() if not line.lstrip().startswith("#"))
            names.update(dict.fromkeys(_names_called(code)))
        self.names = frozenset(names)
        super().__init__(list(names), size)

    def calls(self, program: str) -> Counter[Hashable]:
        code = "\n".join(line.split("#", 1)[0] for line in program.splitlines())
        return Counter(name for name in _names_called(code) if name in self.names)


def _names_called(code: str) -> list[str]:
    """Called names in order of appearance, a name as often as it is called."""
    found = [(m.start(1), m.group(1)) for m in _CALLED.finditer(code)]
    found += [(m.start(1), m.group(1)) for m in _ACTION.finditer(code)]
    return [name for _, name in sorted(found)]


def api_space(docs: str, size: int | None = None, curl: bool = False) -> ApiSpace:
    """The API options a task's API docs offer: curl shapes where the task's calls are curl commands
    (``curl``), named functions otherwise; ``size`` overrides |D|."""
    return CurlShapes(docs, size) if curl else NamedFunctions(docs, size)

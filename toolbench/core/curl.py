"""Parse curl command text into an HTTP request, without a shell.

Agents write REST calls as curl commands. We never hand that text to a shell: we find the first
line that starts with ``curl`` (as ToolBench's evaluator does), join ``\\`` line continuations,
reject shell syntax that would make it more than one plain command (``;``, ``&``, ``|``,
redirections, ``$(...)``, backticks, ``$VAR``), split it into words as ``shlex.split`` does and read the curl options
that make sense for an API call. Options that touch files, other hosts or the terminal are refused
with a message that says why.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from urllib.parse import quote_plus, urlsplit, urlunsplit

from toolbench.core.transport import HttpRequest

CURL_USER_AGENT = "curl/8.5.0"

# Flags that change nothing about the request an API sees.
_HARMLESS_FLAGS = {
    "-s",
    "--silent",
    "-S",
    "--show-error",
    "-L",
    "--location",
    "--location-trusted",
    "-k",
    "--insecure",
    "--compressed",
    "-v",
    "--verbose",
    "-f",
    "--fail",
    "--fail-with-body",
    "-g",
    "--globoff",
    "-#",
    "--progress-bar",
    "--no-progress-meter",
    "-N",
    "--no-buffer",
    "--http1.0",
    "--http1.1",
    "--http2",
    "-0",
    "-4",
    "-6",
    "--ipv4",
    "--ipv6",
    "-q",
    "--disable",
    "--no-keepalive",
    "--tcp-nodelay",
    "--path-as-is",
}
# Options with a value that changes nothing about the request (timeouts, retries).
_HARMLESS_WITH_VALUE = {
    "-m",
    "--max-time",
    "--connect-timeout",
    "--retry",
    "--retry-delay",
    "--retry-max-time",
    "--max-redirs",
    "--limit-rate",
    "-y",
    "--speed-time",
    "-Y",
    "--speed-limit",
    "--expect100-timeout",
}
# Options that read or write local files, reach other hosts or change the process: refused.
_REFUSED = {
    "-o": "writes a file",
    "--output": "writes a file",
    "-O": "writes a file",
    "--remote-name": "writes a file",
    "--output-dir": "writes files",
    "-J": "writes a file",
    "--remote-header-name": "writes a file",
    "-D": "writes a file",
    "--dump-header": "writes a file",
    "-c": "writes a file",
    "--cookie-jar": "writes a file",
    "--trace": "writes a file",
    "--trace-ascii": "writes a file",
    "--stderr": "writes a file",
    "--libcurl": "writes a file",
    "-T": "uploads a local file",
    "--upload-file": "uploads a local file",
    "-K": "reads a config file",
    "--config": "reads a config file",
    "-F": "uploads form files",
    "--form": "uploads form files",
    "-x": "uses a proxy",
    "--proxy": "uses a proxy",
    "--preproxy": "uses a proxy",
    "--unix-socket": "uses a local socket",
    "--abstract-unix-socket": "uses a local socket",
    "--resolve": "redirects hosts",
    "--connect-to": "redirects hosts",
    "--interface": "binds a local interface",
    "-E": "reads a certificate file",
    "--cert": "reads a certificate file",
    "--key": "reads a key file",
    "--cacert": "reads a certificate file",
    "--capath": "reads certificate files",
    "-w": "prints local variables",
    "--write-out": "prints local variables",
    "-n": "reads ~/.netrc",
    "--netrc": "reads ~/.netrc",
    "--netrc-file": "reads a file",
    "-Z": "runs parallel transfers",
    "--parallel": "runs parallel transfers",
}
_DATA_OPTIONS = {
    "-d": "--data",
    "--data": "--data",
    "--data-ascii": "--data",
    "--data-binary": "--data-binary",
    "--data-raw": "--data-raw",
    "--data-urlencode": "--data-urlencode",
    "--json": "--json",
}
_OPTIONS_WITH_VALUE = {
    "-X",
    "--request",
    "-H",
    "--header",
    "--url",
    "-A",
    "--user-agent",
    "-e",
    "--referer",
    "-b",
    "--cookie",
    "-u",
    "--user",
    *_DATA_OPTIONS,
    *_HARMLESS_WITH_VALUE,
}
_SHELL_OPERATORS = set(";&|<>()")
_SHELL_SPECIAL = re.compile(r"[\\$`\"'#;&|<>()]")  # every character the shell check looks at
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_EXPANSION_START = re.compile(r"[({A-Za-z_0-9@*#?$!-]")  # what makes "$" start a shell expansion


class CurlError(ValueError):
    """The text is not a single curl command we can run."""


@dataclass(frozen=True)
class CurlCommand:
    request: HttpRequest
    include_headers: bool = False  # -i: print the status line and headers before the body
    head_only: bool = False  # -I: print the status line and headers, no body


def find_curl_command(text: str) -> str:
    """The first line that starts with ``curl``, with backslash-newline continuations joined.

    A quoted argument may span lines (a pretty-printed JSON body): while a quote is open, the
    following lines belong to the command, as they would in a shell. Each line is scanned once
    (the quote state is carried from line to line), so the cost is linear in the text's length.
    """
    lines = re.sub(r"\\[ \t]*\r?\n", " ", text).splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped == "curl" or (stripped.startswith("curl") and stripped[4].isspace()):
            if index + 1 == len(lines):
                return stripped
            parts = [stripped]
            scanner = _QuoteScanner()
            scanner.feed(stripped)
            for following in lines[index + 1 :]:
                if scanner.open_quote() is None:
                    break
                parts.append(following)
                scanner.feed("\n" + following)
            return "\n".join(parts).strip()
    raise CurlError("no curl command found: write the API call on a line that starts with `curl`")


_UNQUOTED_SPECIAL = re.compile(r"""[\\'"#]""")
_DOUBLE_QUOTED_SPECIAL = re.compile(r'[\\"]')


class _QuoteScanner:
    """Which quote is open at the end of the text fed so far, as a shell reads quotes: a backslash
    escapes the next character (except inside single quotes), and an unquoted ``#`` at the start
    of a word starts a comment, after which quotes do not count."""

    def __init__(self) -> None:
        self.quote: str | None = None
        self.escaped = False
        self.comment = False
        self.previous = ""

    def feed(self, text: str) -> None:
        # Jump from one character that matters to the next (the rest cannot change the state), so
        # a long text costs a few regex searches, not a Python step per character.
        index = 0
        while index < len(text) and not self.comment:
            if self.escaped:
                self.escaped = False
                index += 1
                continue
            if self.quote == "'":
                end = text.find("'", index)
                if end < 0:
                    break
                self.quote, index = None, end + 1
                continue
            found = (_DOUBLE_QUOTED_SPECIAL if self.quote == '"' else _UNQUOTED_SPECIAL).search(text, index)
            if found is None:
                break
            index = found.start()
            char = text[index]
            if char == "\\":
                self.escaped = True
            elif self.quote == '"':
                self.quote = None  # the closing "
            elif char == "#":
                before = text[index - 1] if index else self.previous
                self.comment = not before or before.isspace()
            else:
                self.quote = char
            index += 1
        if text:
            self.previous = text[-1]

    def open_quote(self) -> str | None:
        return self.quote


def parse_curl(command: str) -> CurlCommand:
    """Parse one curl command line into the request curl would send."""
    try:
        tokens = split_words(_strip_comment_and_check_shell(command))
    except ValueError as exc:  # e.g. a trailing backslash
        raise CurlError(f"cannot split the command into words: {exc}") from None
    if not tokens or tokens[0] != "curl":
        raise CurlError("the command must start with `curl`")

    method: str | None = None
    headers: list[tuple[str, str]] = []
    removed_headers: set[str] = set()
    data_parts: list[str] = []
    urls: list[str] = []
    get_mode = head = include = json_mode = path_as_is = globoff = False

    def take(option: str, rest: list[str]) -> str:
        if not rest:
            raise CurlError(f"curl option {option} needs a value")
        return rest.pop(0)

    pending = tokens[1:]
    only_urls = False
    while pending:
        token = pending.pop(0)
        if only_urls or not token.startswith("-") or token == "-":
            urls.append(token)
            continue
        if token == "--":
            only_urls = True
            continue
        if token.startswith("--"):
            options = [token]
        else:  # a cluster of short options: -sSL, -XPOST, -sX POST
            options = []
            for index, char in enumerate(token[1:], start=1):
                option = "-" + char
                if option in _OPTIONS_WITH_VALUE and index + 1 < len(token):
                    options.append(option)
                    pending.insert(0, token[index + 1 :])
                    break
                options.append(option)
        for option in options:
            if option in ("-g", "--globoff"):
                globoff = True  # braces and brackets are sent as they are
            elif option == "--path-as-is":
                path_as_is = True
            if option in _HARMLESS_FLAGS:
                continue
            if option in _REFUSED:
                raise CurlError(f"curl option {option} is not allowed here: it {_REFUSED[option]}")
            if option in ("-G", "--get"):
                get_mode = True
            elif option in ("-I", "--head"):
                head = True
            elif option in ("-i", "--include"):
                include = True
            elif option in _HARMLESS_WITH_VALUE:
                take(option, pending)
            elif option in ("-X", "--request"):
                method = take(option, pending)
            elif option in ("-H", "--header"):
                _add_header(take(option, pending), headers, removed_headers)
            elif option == "--url":
                urls.append(take(option, pending))
            elif option in ("-A", "--user-agent"):
                headers.append(("User-Agent", take(option, pending)))
            elif option in ("-e", "--referer"):
                headers.append(("Referer", take(option, pending)))
            elif option in ("-b", "--cookie"):
                cookie = take(option, pending)
                if "=" not in cookie:
                    raise CurlError("curl option -b without name=value reads a cookie file, which is not allowed here")
                headers.append(("Cookie", cookie))
            elif option in ("-u", "--user"):
                credentials = take(option, pending)
                if ":" not in credentials:
                    raise CurlError("curl option -u needs user:password (curl would prompt for the password)")
                token64 = base64.b64encode(credentials.encode("utf-8")).decode("ascii")
                headers.append(("Authorization", f"Basic {token64}"))
            elif option in _DATA_OPTIONS:
                kind = _DATA_OPTIONS[option]
                data_parts.append(_data_value(kind, take(option, pending)))
                json_mode = json_mode or kind == "--json"
            elif "=" in option and option.split("=", 1)[0] in _OPTIONS_WITH_VALUE | _HARMLESS_FLAGS:
                name = option.split("=", 1)[0]
                raise CurlError(f"option {option}: is unknown (curl takes the value as the next word: {name} VALUE)")
            else:
                raise CurlError(f"option {option}: is unknown or not supported here")

    if not urls:
        raise CurlError("no URL specified")
    if len(urls) > 1:
        raise CurlError(f"one URL per call, got {len(urls)}: {', '.join(urls[:3])}")
    url = _check_url(urls[0], globoff=globoff, path_as_is=path_as_is)

    body = b""
    if data_parts and not get_mode:
        body = ("".join(data_parts) if json_mode else "&".join(data_parts)).encode("utf-8", "surrogateescape")
    elif data_parts:
        query = "&".join(data_parts)
        if _BLANK.search(query):
            raise CurlError(f"curl: (3) URL using bad/illegal format: {_SPACES_HINT}")
        url = url.split("#", 1)[0]  # -G data goes into the query; curl sends no fragment
        url += ("&" if "?" in url else "?") + query
    if method is None:
        method = "HEAD" if head else ("POST" if data_parts and not get_mode else "GET")

    accept = "application/json" if json_mode else "*/*"
    defaults = [("Host", urlsplit(url).netloc), ("User-Agent", CURL_USER_AGENT), ("Accept", accept)]
    if json_mode:
        defaults.append(("Content-Type", "application/json"))
    elif data_parts and not get_mode:
        defaults.append(("Content-Type", "application/x-www-form-urlencoded"))
    # A user header replaces curl's default of the same name; "Name:" removes the default.
    overridden = {name.lower() for name, _ in headers} | removed_headers
    merged = [(k, v) for k, v in defaults if k.lower() not in overridden] + headers
    # curl sends the method as written ("-X get" stays lowercase); -I prints the headers only.
    return CurlCommand(HttpRequest(method, url, tuple(merged), body), include_headers=include or head, head_only=head)


# One piece of a word, or the blanks between words: unquoted characters, a single-quoted string, a
# double-quoted one, a backslash and the character it escapes. Blanks are shlex's: space, tab, CR, LF.
_PIECE = re.compile(r"""([^ \t\r\n'"\\]+)|'([^']*)'|"((?:[^"\\]|\\[\s\S])*)"|\\([\s\S])|([ \t\r\n]+)""")
_OPEN_DOUBLE_QUOTE_ESCAPING = re.compile(r'"(?:[^"\\]|\\[\s\S])*\\')
_ESCAPED_IN_DOUBLE_QUOTES = re.compile(r'\\(["\\])')  # inside "...", a backslash escapes only " and itself


def split_words(command: str) -> list[str]:
    """``shlex.split(command)``, with the same words and the same errors, at a tenth of its cost
    (shlex reads one character at a time in Python; this reads one piece at a time)."""
    words: list[str] = []
    word: str | None = None  # None between words; "" is a word (from '' or "")
    position = 0
    while position < len(command):
        match = _PIECE.match(command, position)
        if match is None:  # an unclosed quote, or a backslash at the very end (inside "... too)
            rest = command[position:]
            ends_escaping = rest == "\\" or bool(_OPEN_DOUBLE_QUOTE_ESCAPING.fullmatch(rest))
            raise ValueError("No escaped character" if ends_escaping else "No closing quotation")
        plain, single, double, escaped, blank = match.groups()
        if blank is not None:
            if word is not None:
                words.append(word)
                word = None
        elif double is not None:
            word = (word or "") + _ESCAPED_IN_DOUBLE_QUOTES.sub(r"\1", double)
        else:
            word = (word or "") + (plain if plain is not None else single if single is not None else escaped)
        position = match.end()
    if word is not None:
        words.append(word)
    return words


def _strip_comment_and_check_shell(command: str) -> str:
    """Refuse shell syntax outside single quotes; drop a trailing ``# comment``."""
    quote_char: str | None = None
    index = 0
    while index < len(command):
        if quote_char == "'":  # inside single quotes only the closing quote counts
            end = command.find("'", index)
            if end < 0:
                break
            quote_char, index = None, end + 1
            continue
        special = _SHELL_SPECIAL.search(command, index)  # the characters between are plain: skip them at once
        if special is None:
            break
        index = special.start()
        char = command[index]
        if char == "\\":
            index += 2
            continue
        if quote_char is None and char == "$" and command[index + 1 : index + 2] in ("'", '"'):
            raise CurlError("shell quoting $'...' and $\"...\" is not supported: use plain single or double quotes")
        if char == "`" or (char == "$" and _EXPANSION_START.match(command, index + 1)):
            raise CurlError(
                "shell expansion ($..., `...`) is not supported: the action is one curl command, not a shell script"
            )
        if quote_char == '"':
            if char == '"':
                quote_char = None
        elif char in "'\"":
            quote_char = char
        elif char in _SHELL_OPERATORS:
            raise CurlError(
                f"shell operator {char!r} is not allowed: the action is one curl command, not a shell script"
                + (" (put the URL in quotes when it contains '&')" if char == "&" else "")
            )
        elif char == "#" and (index == 0 or command[index - 1].isspace()):
            return command[:index]
        index += 1
    if quote_char is not None:
        raise CurlError(f"unbalanced quotes: a {quote_char} is never closed")
    return command


def _add_header(raw: str, headers: list[tuple[str, str]], removed: set[str]) -> None:
    if raw.startswith("@"):
        raise CurlError("curl -H @file reads headers from a file, which is not allowed here")
    if "\r" in raw or "\n" in raw:
        raise CurlError(f"malformed header {raw!r}: a header is one line (no CR or LF)")
    if ":" in raw:
        name, value = raw.split(":", 1)
        name, value = name.strip(), value.strip()
        if not name:
            raise CurlError(f"malformed header {raw!r}")
        if not value:
            removed.add(name.lower())  # curl: "Name:" removes an internal header
            return
        headers.append((name, value))
    elif raw.endswith(";"):
        headers.append((raw[:-1].strip(), ""))
    else:
        raise CurlError(f"malformed header {raw!r}: expected 'Name: value'")


def _data_value(kind: str, value: str) -> str:
    if kind in ("--data", "--data-binary", "--json") and value.startswith("@"):
        raise CurlError(f"curl {kind} @file reads a local file, which is not allowed here")
    if kind == "--data-urlencode":
        # curl's forms: "name=content" and "=content" (checked first), then "@file" and "name@file".
        if "=" in value:
            name, content = value.split("=", 1)
            return (name + "=" if name else "") + quote_plus(content, safe="")
        if "@" in value:
            raise CurlError("curl --data-urlencode name@file reads a local file, which is not allowed here")
        return quote_plus(value, safe="")
    return value


_BLANK = re.compile(r"\s")  # the characters str.isspace() accepts, found without a Python loop
_GLOB = re.compile(r"[{}[\]]")
_SPACES_HINT = "a URL cannot contain spaces (write %20 or +, or use --data-urlencode)"


def _check_url(url: str, globoff: bool = False, path_as_is: bool = False) -> str:
    if _BLANK.search(url):
        raise CurlError(f"curl: (3) URL using bad/illegal format: {_SPACES_HINT}")
    if not globoff and _GLOB.search(url):
        raise CurlError(
            "curl would expand {...} and [...] in the URL into several requests (URL globbing); "
            "percent-encode those characters or add -g"
        )
    if not _SCHEME.match(url):
        url = "http://" + url  # curl's default when the scheme is missing
    scheme = url.split("://", 1)[0].lower()
    if scheme not in ("http", "https"):
        raise CurlError(f"curl: (1) protocol {scheme!r} is not supported here; only http and https URLs are")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise CurlError(f"curl: (3) URL using bad/illegal format: {exc}") from exc
    hostname = parts.hostname
    if not hostname:
        raise CurlError("curl: (3) URL using bad/illegal format or missing host")
    if hostname.endswith("."):  # "example.com." is the same host, fully qualified
        parts = parts._replace(netloc=re.sub(r"\.(?=(:\d*)?$)", "", parts.netloc))
        url = urlunsplit(parts)
    if path_as_is or "/." not in parts.path:  # a dot segment ("." or "..") follows a "/"
        return url
    return urlunsplit(parts._replace(path=_remove_dot_segments(parts.path)))


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, as curl applies it unless --path-as-is is given."""
    output: list[str] = []
    for segment in path.split("/")[1:]:
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    if path.endswith(("/.", "/..")):
        output.append("")
    return "/" + "/".join(output)

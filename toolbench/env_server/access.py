"""Who may talk to the env server: the Host, Origin, content-type and bearer-token checks, in front of the app.

A server on loopback is still reachable from every web page its operator opens: a page can post a
``text/plain`` form to ``http://127.0.0.1:8000/reset`` without asking (a "simple" cross-origin
request), open ``ws://127.0.0.1:8000/ws``, or rebind its own host name to 127.0.0.1 (DNS rebinding)
and then read the answers as same-origin. So before any endpoint runs:

- ``Host`` must name the bound address (for loopback: ``localhost``, ``127.0.0.1``, ``[::1]``, any
  port of digits) or a name given with ``--allow-host``: a rebound name, or a header that is not a name
  and a port (``localhost:evil.com``), is 421;
- ``Origin``, which browsers send and other clients do not, must be absent or one given with
  ``--allow-origin``: a page's request is 403 (a WebSocket's handshake too, before it is accepted).
  ``null`` (sandboxed frames, file: pages: any page can make one) and ``*`` cannot be allowed;
- a request body must be declared JSON (``application/json``, optionally with ``charset=utf-8``):
  anything else is 415, which no page can send cross-origin without a preflight we never approve;
- with a token, ``Authorization: Bearer <token>`` (compared in constant time) on every request but
  ``GET /health``, which serves liveness probes: 401 otherwise. Without the token ``/health`` says only
  that the server is alive (no file paths, no session count); with it, the whole report.

Errors are the app's JSON ``{"detail", "code"}``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
OPEN_PATHS = frozenset({"/health"})  # answered without a token (with liveness only)
JSON_TYPES = ("application/json",)
#: Set in a request's ASGI scope by the guard: whether it carried the token (always, when none is set).
AUTHENTICATED = "toolbench.authenticated"
_PORT = re.compile(r"[0-9]{1,5}")
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s]+")
#: Origins no operator should allow, and why.
_ORIGINS_ANY_PAGE_HAS = {
    "null": "'null' is the origin browsers give sandboxed frames and file: pages, and any page can open one of "
    "those: allowing it would let every web page drive the server",
    "*": "'*' would let every web page drive the server (and read its answers)",
}


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host: str) -> str:
    """How ``host`` appears in a Host header, without port: IPv6 addresses in brackets, lower case."""
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def default_hosts(bound: str) -> tuple[str, ...]:
    """The Host names a server bound to ``bound`` answers to: loopback's names, and the bound address
    itself when it is one address (a wildcard address is no name a client uses)."""
    names = list(LOOPBACK_NAMES)
    try:
        wildcard = ipaddress.ip_address(bound.strip("[]")).is_unspecified
    except ValueError:
        wildcard = False
    if not wildcard and host_name(bound) not in names:
        names.append(host_name(bound))
    return tuple(names)


def normalize_origin(origin: str) -> str:
    """An origin as browsers send it: ``scheme://host[:port]``, lower case, no trailing slash."""
    return origin.strip().rstrip("/").lower()


def checked_origin(origin: str) -> str:
    """An ``--allow-origin`` value, normalized; ``ValueError`` for one any page can claim or not of the form."""
    normalized = normalize_origin(origin)
    if normalized in _ORIGINS_ANY_PAGE_HAS:
        raise ValueError(f"--allow-origin {origin.strip()}: refused: {_ORIGINS_ANY_PAGE_HAS[normalized]}; name the "
                         "pages' origins (scheme://host[:port])")  # fmt: skip
    if not _ORIGIN.fullmatch(normalized):
        raise ValueError(f"--allow-origin {origin.strip()[:100]!r}: an origin is scheme://host[:port], as a browser "
                         "sends it")  # fmt: skip
    return normalized


def host_header_name(host: str) -> str | None:
    """The name in a Host header, lower case, without its port: ``None`` when the header is not a name with an
    optional port of digits (``localhost:evil.com`` and ``[::1]evil.com`` are not)."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return None
        name, rest = host[: end + 1], host[end + 1 :]
    else:
        name, separator, port = host.partition(":")
        rest = separator + port
    if rest and not (rest.startswith(":") and _PORT.fullmatch(rest[1:])):
        return None
    return name or None


@dataclass(frozen=True)
class AccessPolicy:
    """The names, origins and token a server accepts."""

    bound: str = "127.0.0.1"
    extra_hosts: tuple[str, ...] = ()  # --allow-host; "*" accepts any Host
    allowed_origins: tuple[str, ...] = ()  # --allow-origin
    token: bytes | None = None
    token_source: str | None = None
    allowed_hosts: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        hosts = {*default_hosts(self.bound), *(host_name(h) for h in self.extra_hosts)}
        object.__setattr__(self, "allowed_hosts", frozenset(hosts))
        object.__setattr__(self, "allowed_origins", tuple(checked_origin(o) for o in self.allowed_origins))

    @property
    def any_host(self) -> bool:
        return "*" in self.allowed_hosts

    def host_allowed(self, host: str | None) -> bool:
        name = None if host is None else host_header_name(host)
        return name is not None and (self.any_host or name in self.allowed_hosts)

    def origin_allowed(self, origin: str | None) -> bool:
        return origin is None or normalize_origin(origin) in self.allowed_origins

    def token_accepted(self, authorization: str | None) -> bool:
        if self.token is None:
            return True
        scheme, _, credential = (authorization or "").strip().partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(credential.strip().encode(), self.token)

    def exposure(self) -> dict[str, Any]:
        """What the server lets in: for /health, the start banner and ``toolbench doctor``."""
        return {
            "bound": self.bound,
            "loopback_only": is_loopback(self.bound),
            "token_required": self.token is not None,
            "token_source": self.token_source,
            "allowed_hosts": "any" if self.any_host else sorted(self.allowed_hosts),
            "allowed_origins": list(self.allowed_origins),
            "request_bodies": "application/json only",
        }


def _headers(scope: Scope) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in scope.get("headers", ()):
        found.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return found


def _one(headers: dict[str, list[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


def is_json_type(content_type: str) -> bool:
    media, _, params = content_type.partition(";")
    if media.strip().lower() not in JSON_TYPES:
        return False
    for param in filter(None, (p.strip() for p in params.split(";"))):
        name, _, value = param.partition("=")
        if name.strip().lower() != "charset" or value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


def _has_body(headers: dict[str, list[str]]) -> bool:
    if "transfer-encoding" in headers:
        return True
    length = _one(headers, "content-length")
    return length is not None and length.strip() not in ("", "0")


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    detail: str
    headers: tuple[tuple[str, str], ...] = ()


def check(policy: AccessPolicy, scope: Scope) -> Refusal | None:
    """Why the request (HTTP or a WebSocket handshake) is refused, or ``None`` when it may go on."""
    headers = _headers(scope)
    hosts = headers.get("host", [])
    if len(hosts) != 1 or not policy.host_allowed(hosts[0]):
        shown = hosts[0][:100] if hosts else "no Host"
        return Refusal(421, "HOST_NOT_ALLOWED",
                       f"{shown!r} is not a name this server answers to ({', '.join(sorted(policy.allowed_hosts))}); "
                       "the operator can add one with --allow-host")  # fmt: skip
    origins = headers.get("origin", [])
    if len(origins) > 1 or not policy.origin_allowed(origins[0] if origins else None):
        return Refusal(403, "ORIGIN_NOT_ALLOWED",
                       f"requests from the web origin {origins[0][:100]!r} are refused; the operator can allow one "
                       "with --allow-origin")  # fmt: skip
    preflight = scope["type"] == "http" and scope["method"] == "OPTIONS" and "access-control-request-method" in headers
    if preflight and origins:  # an allowed origin's CORS preflight: it carries no credentials by design
        return None
    authenticated = policy.token_accepted(_one(headers, "authorization"))
    scope[AUTHENTICATED] = authenticated
    if scope.get("path") not in OPEN_PATHS and not authenticated:
        return Refusal(401, "TOKEN_REQUIRED", "this server needs its token: send 'Authorization: Bearer <token>'",
                       (("www-authenticate", 'Bearer realm="toolbench"'),))  # fmt: skip
    if scope["type"] == "http" and _has_body(headers):
        content_type = _one(headers, "content-type")
        if content_type is None or not is_json_type(content_type):
            return Refusal(415, "UNSUPPORTED_MEDIA_TYPE",
                           f"a request body must be JSON sent as 'Content-Type: application/json', not "
                           f"{(content_type or 'none')[:100]!r}")  # fmt: skip
    return None


def _body(refusal: Refusal) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    body = json.dumps({"detail": refusal.detail, "code": refusal.code}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(name.encode(), value.encode()) for name, value in refusal.headers]
    return body, headers


class AccessGuard:
    """ASGI middleware refusing what ``check`` refuses; everything else goes to ``app``."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy):
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = check(self.policy, scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        body, headers = _body(refusal)
        if scope["type"] == "http":
            headers.append((b"connection", b"close"))  # its body, if any, is not read: no keep-alive after it
            await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in scope.get("extensions", {}):  # refused before accept, with a reason
            await send({"type": "websocket.http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})  # policy violation: a 403 to the handshake


def cors_headers_allowed() -> Iterable[str]:
    """The request headers a page from an allowed origin may send."""
    return ("authorization", "content-type", "x-session-id")

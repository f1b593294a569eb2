"""``toolbench doctor --url``: a running env server's exposure, as it reports it and as it behaves.

Each probe sends what a hostile web page or local user would and checks that the server refuses it;
none of them starts a session (a probe the server wrongly accepts is aimed at an endpoint that then
fails for want of one, or only reads). Every exchange has one deadline and a bounded answer, as
``RemoteEnv``'s do, and the token goes where ``RemoteEnv`` would send it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from toolbench.bounded_http import Answer, BoundedConnection, HttpError

FOREIGN_HOST = "rebound.invalid"
FOREIGN_ORIGIN = "https://page.invalid"
MAX_ANSWER_BYTES = 1024 * 1024
NO_TOKEN_WARNING = "the server has no token: any local user can drive it (start it with --token-file PATH)"


class ProbeError(RuntimeError):
    """The server could not be reached or answered out of bounds."""


@dataclass
class Probe:
    name: str
    expected: str
    got: str
    ok: bool


def _json(answer: Answer) -> Any:
    try:
        return json.loads(answer.body)
    except ValueError:
        return None


def _status(answer: Answer) -> str:
    payload = _json(answer)
    code = payload.get("code") if isinstance(payload, dict) else None
    return f"{answer.status}{' ' + str(code)[:60] if code else ''}"


def probe_server(url: str, token: str | None, timeout: float = 10.0) -> dict[str, Any]:
    """The server's ``/health`` exposure, the outcome of each probe, and warnings."""
    url = url.rstrip("/")
    auth = {"Authorization": f"Bearer {token}"} if token else {}

    def ask(method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> Answer:
        connection = BoundedConnection(url)
        try:
            return connection.request(method, path, headers, body, time.monotonic() + timeout, MAX_ANSWER_BYTES)
        except HttpError as exc:
            raise ProbeError(f"{method} {path}: {exc}") from None
        finally:
            connection.close()

    try:
        health = ask("GET", "/health", auth)
    except ValueError as exc:
        raise ProbeError(str(exc)) from None
    report = _json(health)
    exposure = report.get("exposure") if health.status == 200 and isinstance(report, dict) else None
    token_required = bool(exposure and exposure.get("token_required"))
    probes: list[Probe] = []

    def check(name: str, expected: tuple[int, ...], answer: Answer, words: str) -> None:
        probes.append(Probe(name, words, _status(answer), answer.status in expected))

    check("a foreign Host (DNS rebinding)", (421, 403), ask("GET", "/metadata", {**auth, "Host": FOREIGN_HOST}),
          "refused: 421 or 403")  # fmt: skip
    check("a foreign Origin (a web page)", (403,), ask("GET", "/metadata", {**auth, "Origin": FOREIGN_ORIGIN}),
          "refused: 403")  # fmt: skip
    check("a text/plain body (a cross-origin form post)", (415,),
          ask("POST", "/step", {**auth, "Content-Type": "text/plain"}, b'{"action": "x"}'), "refused: 415")  # fmt: skip
    without_token = ask("GET", "/metadata", {})
    warnings: list[str] = []
    if token_required:
        check("no token", (401,), without_token, "refused: 401")
    else:
        loopback = bool(exposure and exposure.get("loopback_only"))
        probes.append(Probe("no token", "answered (no token set)", _status(without_token),
                            without_token.status == 200 and loopback))  # fmt: skip
        if without_token.status == 200:
            warnings.append(NO_TOKEN_WARNING)
    probes.append(_websocket_probe(url, auth, timeout))
    return {
        "url": url,
        "exposure": exposure,
        "probes": [probe.__dict__ for probe in probes],
        "warnings": warnings,
        "ok": health.status == 200 and all(probe.ok for probe in probes),
    }


def _websocket_probe(url: str, auth: dict[str, str], timeout: float) -> Probe:
    name, expected = "a WebSocket from a foreign Origin", "handshake refused: 403"
    try:
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect
    except ImportError:
        return Probe(name, expected, "not probed: the websockets library is missing", False)
    try:
        with connect(url.replace("http", "ws", 1) + "/ws", origin=FOREIGN_ORIGIN, additional_headers=auth,  # type: ignore[arg-type]
                     open_timeout=timeout, proxy=None, max_size=MAX_ANSWER_BYTES):  # fmt: skip
            return Probe(name, expected, "accepted", False)
    except InvalidStatus as exc:
        status = exc.response.status_code
        return Probe(name, expected, str(status), status == 403)
    except (OSError, TimeoutError) as exc:
        return Probe(name, expected, f"no answer ({type(exc).__name__})", False)

"""``toolbench doctor --url``: a running env server's exposure, as it reports it and as it behaves.

Each probe sends what a hostile web page or local user would and checks that the server refuses it;
none of them starts a session (a probe the server wrongly accepts is aimed at an endpoint that then
fails for want of one, or only reads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests

FOREIGN_HOST = "rebound.invalid"
FOREIGN_ORIGIN = "https://page.invalid"


@dataclass
class Probe:
    name: str
    expected: str
    got: str
    ok: bool


def _status(response: requests.Response) -> str:
    try:
        code = response.json().get("code")
    except ValueError:
        code = None
    return f"{response.status_code}{' ' + code if code else ''}"


def probe_server(url: str, token: str | None, timeout: float = 10.0) -> dict[str, Any]:
    """The server's ``/health`` exposure and the outcome of each probe."""
    url = url.rstrip("/")
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    health = requests.get(url + "/health", headers=auth, timeout=timeout)
    exposure = health.json().get("exposure") if health.ok else None
    token_required = bool(exposure and exposure.get("token_required"))
    probes: list[Probe] = []

    def check(name: str, expected: tuple[int, ...], response: requests.Response, words: str) -> None:
        probes.append(Probe(name, words, _status(response), response.status_code in expected))

    check("a foreign Host (DNS rebinding)", (421, 403),
          requests.get(url + "/metadata", headers={**auth, "Host": FOREIGN_HOST}, timeout=timeout),
          "refused: 421 or 403")  # fmt: skip
    check("a foreign Origin (a web page)", (403,),
          requests.get(url + "/metadata", headers={**auth, "Origin": FOREIGN_ORIGIN}, timeout=timeout),
          "refused: 403")  # fmt: skip
    check("a text/plain body (a cross-origin form post)", (415,),
          requests.post(url + "/step", data=b'{"action": "x"}', headers={**auth, "Content-Type": "text/plain"},
                        timeout=timeout),
          "refused: 415")  # fmt: skip
    without_token = requests.get(url + "/metadata", timeout=timeout)
    if token_required:
        check("no token", (401,), without_token, "refused: 401")
    else:
        probes.append(Probe("no token", "answered (no token set)", _status(without_token),
                            without_token.ok and bool(exposure and exposure.get("loopback_only"))))  # fmt: skip
    probes.append(_websocket_probe(url, auth, timeout))
    return {
        "url": url,
        "exposure": exposure,
        "probes": [probe.__dict__ for probe in probes],
        "ok": health.ok and all(probe.ok for probe in probes),
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
                     open_timeout=timeout, proxy=None):  # fmt: skip
            return Probe(name, expected, "accepted", False)
    except InvalidStatus as exc:
        status = exc.response.status_code
        return Probe(name, expected, str(status), status == 403)
    except (OSError, TimeoutError) as exc:
        return Probe(name, expected, f"no answer ({type(exc).__name__})", False)

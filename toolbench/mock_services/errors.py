"""Client errors every served fake answers the same way, in its own error shape.

Apart from ``http.py`` so that a fake that needs none of its helpers (the WebShop site) does not
import the HTTP transport with it."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, Response


def answer_unreadable_requests(app: Flask, respond: Callable[[int, str], Response]) -> None:
    """Make a request that cannot be read the client's error, a 400 that ``respond(status, message)``
    writes in the service's own error shape: a query string that is not UTF-8 (Werkzeug decodes it
    when a view first reads an argument) or a body whose chunked encoding is broken (the server's
    reader raises ``OSError``)."""

    @app.errorhandler(UnicodeDecodeError)
    def not_utf8(error: UnicodeDecodeError) -> Response:
        return respond(400, "Bad Request: the request is not valid UTF-8")

    @app.errorhandler(OSError)
    def unreadable(error: OSError) -> Response:
        if "chunk" not in str(error).lower():  # not the request's fault: a server error, as before
            return respond(500, "Internal Server Error")
        return respond(400, f"Bad Request: the request body cannot be read ({error})"[:200])

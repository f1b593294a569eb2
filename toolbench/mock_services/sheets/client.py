"""Real ``gspread`` clients wired to the emulator: in-process, or over HTTP on loopback.

Both give an unmodified ``gspread.Client`` with no credentials. ``make_client`` answers from the
Flask app in this process through ``Router``; ``served_client`` rewrites the Google hosts to a served
emulator (``toolbench serve sheets``) and refuses every other host, so nothing leaves the machine.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import gspread
import requests
from flask import Flask
from requests.adapters import BaseAdapter, HTTPAdapter

from toolbench.core.transport import Router
from toolbench.mock_services.sheets.app import DRIVE_HOST, SHEETS_HOST, create_app
from toolbench.mock_services.sheets.store import SheetsStore

HOSTS = (SHEETS_HOST, DRIVE_HOST)


def make_router(app: Flask) -> Router:
    return Router({host: app for host in HOSTS})


def make_client(store: SheetsStore | Flask) -> gspread.Client:
    """A gspread client whose requests are answered in-process by the emulator over ``store``."""
    app = store if isinstance(store, Flask) else create_app(store)
    return gspread.Client(auth=None, session=make_router(app).session())  # type: ignore[arg-type]


class _RefusingAdapter(BaseAdapter):
    """Any host other than the Google APIs: fail like an unreachable network, send nothing."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        host = urlsplit(request.url or "").hostname
        raise requests.ConnectionError(f"host {host!r} is not served by the Sheets emulator", request=request)

    def close(self) -> None:
        pass


class _LoopbackAdapter(HTTPAdapter):
    """Sends requests for the Google API hosts to the served emulator instead, path and query intact."""

    def __init__(self, base_url: str):
        super().__init__()
        self.base_url = base_url.rstrip("/")

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        parts = urlsplit(request.url or "")
        request.url = self.base_url + parts.path + (f"?{parts.query}" if parts.query else "")
        return super().send(request, **kwargs)


def served_session(base_url: str) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # no proxies from the environment
    session.mount("http://", _RefusingAdapter())
    session.mount("https://", _RefusingAdapter())
    adapter = _LoopbackAdapter(base_url)
    for host in HOSTS:
        session.mount(f"https://{host}/", adapter)
    return session


def served_client(base_url: str) -> gspread.Client:
    """A gspread client talking over HTTP to an emulator served at ``base_url`` (``http://127.0.0.1:PORT``)."""
    return gspread.Client(auth=None, session=served_session(base_url))  # type: ignore[arg-type]

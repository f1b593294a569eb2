"""Mock services: one backend per service, usable without Gymnasium.

``create_service_app(name)`` builds the Flask app that ``toolbench serve NAME`` serves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Flask is imported with a service, not with this list (``toolbench list`` stays fast)
    from flask import Flask


def _openweather(api_key: str | None) -> Flask:
    from toolbench.mock_services import openweather

    return openweather.create_app(api_keys=[api_key or openweather.DEMO_API_KEY])


def _catapi(api_key: str | None) -> Flask:
    from toolbench.mock_services import catapi

    return catapi.create_app(catapi.CatStore.with_account(api_key or catapi.DEMO_API_KEY))


def _sheets(api_key: str | None) -> Flask:
    from toolbench.mock_services import sheets

    return sheets.create_demo_app()  # gspread authenticates with OAuth, not a key: any token is accepted


def _webshop(api_key: str | None) -> Flask:
    from toolbench.mock_services import webshop

    return webshop.create_demo_app()  # a website for people and browser agents: no key


def _rapidapi(api_key: str | None) -> Flask:
    from toolbench.mock_services.rapidapi import virtual

    return virtual.create_app()  # StableToolBench's toolbench_key only separates sessions: no key


def _demo_key(name: str) -> str:
    from toolbench.mock_services import catapi, openweather

    keys = {"openweather": openweather.DEMO_API_KEY, "catapi": catapi.DEMO_API_KEY}
    return keys.get(name, "(none needed)")


SERVICES: dict[str, Callable[[str | None], Flask]] = {
    "openweather": _openweather,
    "catapi": _catapi,
    "sheets": _sheets,
    "webshop": _webshop,
    "rapidapi": _rapidapi,
}


def create_service_app(name: str, api_key: str | None = None) -> Flask:
    """The Flask app of a served service; ``api_key`` replaces the demo key it accepts."""
    if name not in SERVICES:
        raise KeyError(f"unknown service {name!r}; services: {', '.join(SERVICES)}")
    return SERVICES[name](api_key)


def service_api_key(name: str, api_key: str | None = None) -> str:
    """The key a served service accepts."""
    return api_key or _demo_key(name)

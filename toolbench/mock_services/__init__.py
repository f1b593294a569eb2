"""Mock services: one backend per service, usable without Gymnasium.

``create_service_app(name)`` builds the Flask app that ``toolbench serve NAME`` serves: the app of the
catalog line whose ``fixture_slug`` is ``name`` and that names a ``service`` (a package's task adds its
own with its line). The functions below build the shipped tasks' apps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from toolbench.core import taskspec

if TYPE_CHECKING:  # Flask is imported with a service, not with this list (``toolbench list`` stays fast)
    from flask import Flask


def openweather_app(api_key: str | None) -> Flask:
    from toolbench.mock_services import openweather

    return openweather.create_app(api_keys=[api_key or openweather.DEMO_API_KEY])


def catapi_app(api_key: str | None) -> Flask:
    from toolbench.mock_services import catapi

    return catapi.create_app(catapi.CatStore.with_account(api_key or catapi.DEMO_API_KEY))


def sheets_app(api_key: str | None) -> Flask:
    from toolbench.mock_services import sheets

    return sheets.create_demo_app()  # gspread authenticates with OAuth, not a key: any token is accepted


def webshop_app(api_key: str | None) -> Flask:
    from toolbench.mock_services import webshop

    return webshop.create_demo_app()  # a website for people and browser agents: no key


def rapidapi_app(api_key: str | None) -> Flask:
    from toolbench.mock_services.rapidapi import virtual

    return virtual.create_app()  # StableToolBench's toolbench_key only separates sessions: no key


class _Services(Mapping[str, Callable[[str | None], "Flask"]]):
    """Served name -> the function that builds its app, read from the registered catalog lines each
    time (the catalog registers them below this package; a package's task may add one later)."""

    def _lines(self) -> dict[str, taskspec.TaskSpec]:
        return {spec.fixture_slug: spec for spec in taskspec.TaskList() if spec.service}

    def __getitem__(self, name: str) -> Callable[[str | None], Flask]:
        service = self._lines()[name].service
        assert service is not None
        builder: Callable[[str | None], Flask] = taskspec.resolve(service)
        return builder

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines())

    def __len__(self) -> int:
        return len(self._lines())


SERVICES: Mapping[str, Callable[[str | None], Flask]] = _Services()


def create_service_app(name: str, api_key: str | None = None) -> Flask:
    """The Flask app of a served service; ``api_key`` replaces the demo key it accepts."""
    if name not in SERVICES:
        raise KeyError(f"unknown service {name!r}; services: {', '.join(SERVICES)}")
    return SERVICES[name](api_key)


def service_api_key(name: str, api_key: str | None = None) -> str:
    """The key a served service accepts."""
    spec = next((spec for spec in taskspec.TaskList() if spec.service and spec.fixture_slug == name), None)
    if api_key or spec is None or spec.service_key is None:
        return api_key or "(none needed)"
    key: str = taskspec.resolve(spec.service_key)
    return key

"""The hub's special-purpose APIs: weather, money, markets, places, sports tables, text, codes,
security checks, messaging, storage, payments, points, carts, links, calculators, energy,
shipping, flights and images; one module per service or small group of services, on the helpers
of ``shared``.

Each service is a function of a naming style (0, 1 or 2) that returns its APIs, so two tools that
offer the same service still name their APIs differently. Every handler computes its answer from
its arguments, the world and the session's state; the POST APIs write to the state (files,
messages, payments, points, carts, short links), and their GET partners read it back. The
questions each API can answer are in ``rapidapi.questions``. ``SERVICES`` names each service.
"""

from __future__ import annotations

from collections.abc import Callable

from toolbench.mock_services.rapidapi.hub import Api
from toolbench.mock_services.rapidapi.services.calculators import health_service, utils_service
from toolbench.mock_services.rapidapi.services.commerce import (
    ads_service,
    cart_service,
    payments_service,
    rewards_service,
)
from toolbench.mock_services.rapidapi.services.energy import energy_service
from toolbench.mock_services.rapidapi.services.language import dictionary_service, text_service
from toolbench.mock_services.rapidapi.services.markets import coins_service, currency_service, stocks_service
from toolbench.mock_services.rapidapi.services.messaging import chat_service, messaging_service
from toolbench.mock_services.rapidapi.services.places import geo_service
from toolbench.mock_services.rapidapi.services.security import codes_service, security_service
from toolbench.mock_services.rapidapi.services.sports import sports_service
from toolbench.mock_services.rapidapi.services.storage import links_service, storage_service
from toolbench.mock_services.rapidapi.services.travel import flights_service, logistics_service
from toolbench.mock_services.rapidapi.services.vision import vision_service
from toolbench.mock_services.rapidapi.services.weather import weather_service

SERVICES: dict[str, Callable[[int], list[Api]]] = {
    "weather": weather_service,
    "currency": currency_service,
    "stocks": stocks_service,
    "coins": coins_service,
    "geo": geo_service,
    "sports": sports_service,
    "text": text_service,
    "dictionary": dictionary_service,
    "codes": codes_service,
    "security": security_service,
    "messaging": messaging_service,
    "storage": storage_service,
    "payments": payments_service,
    "rewards": rewards_service,
    "cart": cart_service,
    "chat": chat_service,
    "links": links_service,
    "utils": utils_service,
    "health": health_service,
    "energy": energy_service,
    "logistics": logistics_service,
    "flights": flights_service,
    "vision": vision_service,
    "ads": ads_service,
}

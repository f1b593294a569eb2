"""A local Home Search: the ToolBench criteria API over a listings database of US homes."""

from toolbench.mock_services.home_search.api import FUNCTIONS, SEARCH_DEFAULTS, HomeSearchAPI
from toolbench.mock_services.home_search.listings import BUY_TYPES, RENT_TYPES, Home, load_listings, search

__all__ = [
    "BUY_TYPES",
    "FUNCTIONS",
    "RENT_TYPES",
    "SEARCH_DEFAULTS",
    "Home",
    "HomeSearchAPI",
    "load_listings",
    "search",
]

"""A local Home Search: the ToolBench criteria API over a listings database of US homes."""

from toolbench.mock_services.home_search.api import FUNCTIONS, HomeSearchAPI
from toolbench.mock_services.home_search.listings import BUY_TYPES, RENT_TYPES, Home, load_listings, search

__all__ = ["BUY_TYPES", "FUNCTIONS", "RENT_TYPES", "Home", "HomeSearchAPI", "load_listings", "search"]

"""A local The Cat API: images, the 67 real breeds, categories, and per-key favourites and votes."""

from toolbench.mock_services.catapi.app import DEMO_API_KEY, HOST, create_app
from toolbench.mock_services.catapi.store import CatStore, load_initial_account
from toolbench.mock_services.catapi.world import Catalogue

__all__ = ["DEMO_API_KEY", "HOST", "CatStore", "Catalogue", "create_app", "load_initial_account"]

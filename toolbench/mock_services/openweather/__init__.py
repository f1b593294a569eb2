"""A local OpenWeather: current weather, forecasts, air pollution and geocoding for real cities."""

from toolbench.mock_services.openweather.app import DEMO_API_KEY, HOST, create_app
from toolbench.mock_services.openweather.world import DEFAULT_NOW, City, World

__all__ = ["DEMO_API_KEY", "DEFAULT_NOW", "HOST", "City", "World", "create_app"]

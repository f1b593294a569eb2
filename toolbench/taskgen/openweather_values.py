"""What OpenWeather's questions say and ask, shared by the seen templates (``openweather``) and the
unseen grammar (``openweather_unseen``): countries' names, the optional parameters and their
wording, how a question names a city, and the reference's curl command."""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.openweather import City, World

BASE = "https://api.openweathermap.org"

COUNTRY_NAMES = {
    "AE": "the United Arab Emirates",
    "AF": "Afghanistan",
    "AM": "Armenia",
    "AO": "Angola",
    "AR": "Argentina",
    "AT": "Austria",
    "AU": "Australia",
    "AZ": "Azerbaijan",
    "BD": "Bangladesh",
    "BE": "Belgium",
    "BG": "Bulgaria",
    "BO": "Bolivia",
    "BR": "Brazil",
    "CA": "Canada",
    "CD": "the DR Congo",
    "CH": "Switzerland",
    "CL": "Chile",
    "CN": "China",
    "CO": "Colombia",
    "CR": "Costa Rica",
    "CU": "Cuba",
    "CZ": "Czechia",
    "DE": "Germany",
    "DK": "Denmark",
    "DO": "the Dominican Republic",
    "DZ": "Algeria",
    "EC": "Ecuador",
    "EE": "Estonia",
    "EG": "Egypt",
    "ES": "Spain",
    "ET": "Ethiopia",
    "FI": "Finland",
    "FJ": "Fiji",
    "FR": "France",
    "GB": "the UK",
    "GE": "Georgia",
    "GH": "Ghana",
    "GL": "Greenland",
    "GR": "Greece",
    "GT": "Guatemala",
    "HK": "Hong Kong",
    "HR": "Croatia",
    "HU": "Hungary",
    "ID": "Indonesia",
    "IE": "Ireland",
    "IL": "Israel",
    "IN": "India",
    "IQ": "Iraq",
    "IR": "Iran",
    "IS": "Iceland",
    "IT": "Italy",
    "JM": "Jamaica",
    "JO": "Jordan",
    "JP": "Japan",
    "KE": "Kenya",
    "KH": "Cambodia",
    "KR": "South Korea",
    "KZ": "Kazakhstan",
    "LB": "Lebanon",
    "LK": "Sri Lanka",
    "LT": "Lithuania",
    "LU": "Luxembourg",
    "LV": "Latvia",
    "MA": "Morocco",
    "MC": "Monaco",
    "MG": "Madagascar",
    "MM": "Myanmar",
    "MN": "Mongolia",
    "MT": "Malta",
    "MX": "Mexico",
    "MY": "Malaysia",
    "NG": "Nigeria",
    "NL": "the Netherlands",
    "NO": "Norway",
    "NP": "Nepal",
    "NZ": "New Zealand",
    "PA": "Panama",
    "PE": "Peru",
    "PG": "Papua New Guinea",
    "PH": "the Philippines",
    "PK": "Pakistan",
    "PL": "Poland",
    "PR": "Puerto Rico",
    "PT": "Portugal",
    "PY": "Paraguay",
    "QA": "Qatar",
    "RO": "Romania",
    "RS": "Serbia",
    "RU": "Russia",
    "SA": "Saudi Arabia",
    "SE": "Sweden",
    "SG": "Singapore",
    "SI": "Slovenia",
    "SK": "Slovakia",
    "SN": "Senegal",
    "TH": "Thailand",
    "TN": "Tunisia",
    "TR": "Turkey",
    "TW": "Taiwan",
    "TZ": "Tanzania",
    "UA": "Ukraine",
    "UG": "Uganda",
    "US": "the US",
    "UY": "Uruguay",
    "UZ": "Uzbekistan",
    "VE": "Venezuela",
    "VN": "Vietnam",
    "ZA": "South Africa",
    "ZW": "Zimbabwe",
}
LANGUAGE_NAMES = {
    "fr": "French",
    "zh_cn": "Simplified Chinese",
    "it": "Italian",
    "de": "German",
    "ru": "Russian",
    "ja": "Japanese",
    "nl": "Dutch",
}
UNIT_PHRASES = {
    "metric": [" in Celsius", " in metric units", " in degrees Celsius"],
    "imperial": [" in Fahrenheit", " using imperial units", " in °F"],
    "standard": [" in Kelvin", " in standard units"],
}


class Options:
    """Optional parameters of one question: their wording and their query string."""

    def __init__(self, rng: Any, allow_cnt: bool):
        self.units = rng.choice([None, None, "metric", "metric", "imperial", "standard"])
        self.lang = rng.choice([None] * 5 + sorted(LANGUAGE_NAMES))
        self.mode = rng.choice([None] * 8 + ["xml", "json"])
        self.cnt = rng.randint(2, 12) if allow_cnt and rng.random() < 0.35 else None
        self.units_text = rng.choice(UNIT_PHRASES[self.units]) if self.units else ""
        self.lang_text = f" Please answer in {LANGUAGE_NAMES[self.lang]}." if self.lang else ""
        mode_texts = {"xml": " I need the data as XML.", "json": " A JSON response is fine."}
        self.mode_text = mode_texts.get(self.mode or "", "")

    def query(self) -> str:
        params = [("cnt", self.cnt), ("units", self.units), ("lang", self.lang), ("mode", self.mode)]
        return "".join(f"&{name}={value}" for name, value in params if value is not None)

    def tail(self) -> str:
        return self.lang_text + self.mode_text


def place_of(city: City, world: World) -> tuple[str, str]:
    """How a question names a city, and the matching ``q`` value."""
    same_name = world.search(city.name)
    if city.country == "US":
        return f"{city.name}, {city.state}", f"{city.name},{city.state_code},US"
    if len(same_name) == 1:
        return city.name, city.name
    return f"{city.name}, {COUNTRY_NAMES[city.country]}", f"{city.name},{city.country}"


def curl_for(path: str, query: str) -> str:
    return f"curl -X GET '{BASE}{path}?{query}&appid={{API_KEY}}'"

"""The world behind the RapidAPI hub: one deterministic database every tool reads.

Every tool of the hub answers from these tables, so an id one API returns works in another (a team
id from a scores tool in a player-stats tool, a city id from a geography tool in a weather tool).
The tables are made up here: countries and cities (real places, rounded coordinates), weather,
currencies, companies and their stocks, crypto coins, sports leagues, teams, players and matches,
people, movies, artists, albums and songs, recipes and foods, products, books, jobs, news
articles, events, airports, flights and hotels, video games, web domains, dictionary words, drugs,
courses, ad campaigns, devices and parcels.

Each table is a list of dicts with an ``id`` (a string); ``World.get(table, id)`` finds a row.
Every random choice comes from a ``random.Random`` seeded by a string (hashed with SHA-512, never
``hash()``), so the world is the same in every process; ``build_world`` is memoized. Time series
(weather by day, stock prices by day) are computed from a hash of their key, not stored. The clock
is fixed: today is 2026-03-02.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from typing import Any

TODAY = date(2026, 3, 2)
HISTORY_DAYS = 30  # prices and weather are known for the 30 days before today
FORECAST_DAYS = 7  # and for the 7 days from today

# Real countries: code, name, region, currency, calling code, language, population (millions).
COUNTRIES = (
    ("US", "United States", "Americas", "USD", "+1", "English", 335.0),
    ("CA", "Canada", "Americas", "CAD", "+1", "English", 40.1),
    ("MX", "Mexico", "Americas", "MXN", "+52", "Spanish", 128.5),
    ("BR", "Brazil", "Americas", "BRL", "+55", "Portuguese", 216.4),
    ("AR", "Argentina", "Americas", "ARS", "+54", "Spanish", 46.6),
    ("GB", "United Kingdom", "Europe", "GBP", "+44", "English", 68.3),
    ("FR", "France", "Europe", "EUR", "+33", "French", 68.2),
    ("DE", "Germany", "Europe", "EUR", "+49", "German", 84.5),
    ("ES", "Spain", "Europe", "EUR", "+34", "Spanish", 48.4),
    ("IT", "Italy", "Europe", "EUR", "+39", "Italian", 58.9),
    ("NL", "Netherlands", "Europe", "EUR", "+31", "Dutch", 17.9),
    ("SE", "Sweden", "Europe", "SEK", "+46", "Swedish", 10.6),
    ("CH", "Switzerland", "Europe", "CHF", "+41", "German", 8.9),
    ("PL", "Poland", "Europe", "PLN", "+48", "Polish", 36.7),
    ("TR", "Turkey", "Asia", "TRY", "+90", "Turkish", 85.3),
    ("IN", "India", "Asia", "INR", "+91", "Hindi", 1428.6),
    ("CN", "China", "Asia", "CNY", "+86", "Chinese", 1410.7),
    ("JP", "Japan", "Asia", "JPY", "+81", "Japanese", 124.5),
    ("KR", "South Korea", "Asia", "KRW", "+82", "Korean", 51.7),
    ("SG", "Singapore", "Asia", "SGD", "+65", "English", 5.9),
    ("AE", "United Arab Emirates", "Asia", "AED", "+971", "Arabic", 9.5),
    ("AU", "Australia", "Oceania", "AUD", "+61", "English", 26.6),
    ("NZ", "New Zealand", "Oceania", "NZD", "+64", "English", 5.2),
    ("ZA", "South Africa", "Africa", "ZAR", "+27", "English", 60.4),
    ("EG", "Egypt", "Africa", "EGP", "+20", "Arabic", 112.7),
    ("NG", "Nigeria", "Africa", "NGN", "+234", "English", 223.8),
    ("KE", "Kenya", "Africa", "KES", "+254", "Swahili", 55.1),
)

# Real cities: name, country code, latitude, longitude, UTC offset (hours), population (thousands).
CITIES = (
    ("New York", "US", 40.71, -74.01, -5, 8336),
    ("Los Angeles", "US", 34.05, -118.24, -8, 3822),
    ("Chicago", "US", 41.88, -87.63, -6, 2665),
    ("Houston", "US", 29.76, -95.37, -6, 2302),
    ("Seattle", "US", 47.61, -122.33, -8, 749),
    ("Miami", "US", 25.76, -80.19, -5, 449),
    ("Boston", "US", 42.36, -71.06, -5, 650),
    ("Denver", "US", 39.74, -104.99, -7, 711),
    ("Toronto", "CA", 43.65, -79.38, -5, 2794),
    ("Vancouver", "CA", 49.28, -123.12, -8, 662),
    ("Montreal", "CA", 45.50, -73.57, -5, 1762),
    ("Mexico City", "MX", 19.43, -99.13, -6, 9209),
    ("Guadalajara", "MX", 20.67, -103.35, -6, 1385),
    ("Sao Paulo", "BR", -23.55, -46.63, -3, 11451),
    ("Rio de Janeiro", "BR", -22.91, -43.17, -3, 6211),
    ("Buenos Aires", "AR", -34.60, -58.38, -3, 3121),
    ("London", "GB", 51.51, -0.13, 0, 8866),
    ("Manchester", "GB", 53.48, -2.24, 0, 568),
    ("Edinburgh", "GB", 55.95, -3.19, 0, 514),
    ("Paris", "FR", 48.86, 2.35, 1, 2103),
    ("Lyon", "FR", 45.76, 4.84, 1, 522),
    ("Marseille", "FR", 43.30, 5.37, 1, 873),
    ("Berlin", "DE", 52.52, 13.41, 1, 3755),
    ("Munich", "DE", 48.14, 11.58, 1, 1512),
    ("Hamburg", "DE", 53.55, 9.99, 1, 1892),
    ("Madrid", "ES", 40.42, -3.70, 1, 3332),
    ("Barcelona", "ES", 41.39, 2.17, 1, 1636),
    ("Valencia", "ES", 39.47, -0.38, 1, 807),
    ("Rome", "IT", 41.90, 12.50, 1, 2749),
    ("Milan", "IT", 45.46, 9.19, 1, 1371),
    ("Naples", "IT", 40.85, 14.27, 1, 909),
    ("Amsterdam", "NL", 52.37, 4.90, 1, 921),
    ("Rotterdam", "NL", 51.92, 4.48, 1, 664),
    ("Stockholm", "SE", 59.33, 18.07, 1, 984),
    ("Zurich", "CH", 47.38, 8.54, 1, 427),
    ("Geneva", "CH", 46.20, 6.14, 1, 203),
    ("Warsaw", "PL", 52.23, 21.01, 1, 1861),
    ("Krakow", "PL", 50.06, 19.94, 1, 804),
    ("Istanbul", "TR", 41.01, 28.98, 3, 15655),
    ("Ankara", "TR", 39.93, 32.86, 3, 5803),
    ("Mumbai", "IN", 19.08, 72.88, 5.5, 12442),
    ("Delhi", "IN", 28.70, 77.10, 5.5, 16787),
    ("Bangalore", "IN", 12.97, 77.59, 5.5, 8443),
    ("Beijing", "CN", 39.90, 116.41, 8, 21893),
    ("Shanghai", "CN", 31.23, 121.47, 8, 24870),
    ("Shenzhen", "CN", 22.54, 114.06, 8, 17560),
    ("Tokyo", "JP", 35.68, 139.69, 9, 13960),
    ("Osaka", "JP", 34.69, 135.50, 9, 2753),
    ("Kyoto", "JP", 35.01, 135.77, 9, 1464),
    ("Seoul", "KR", 37.57, 126.98, 9, 9411),
    ("Busan", "KR", 35.18, 129.08, 9, 3349),
    ("Singapore", "SG", 1.35, 103.82, 8, 5918),
    ("Dubai", "AE", 25.20, 55.27, 4, 3604),
    ("Abu Dhabi", "AE", 24.45, 54.38, 4, 1483),
    ("Sydney", "AU", -33.87, 151.21, 10, 5312),
    ("Melbourne", "AU", -37.81, 144.96, 10, 5078),
    ("Perth", "AU", -31.95, 115.86, 8, 2125),
    ("Auckland", "NZ", -36.85, 174.76, 12, 1693),
    ("Cape Town", "ZA", -33.92, 18.42, 2, 4618),
    ("Johannesburg", "ZA", -26.20, 28.05, 2, 5635),
    ("Cairo", "EG", 30.04, 31.24, 2, 10230),
    ("Lagos", "NG", 6.52, 3.38, 1, 15388),
    ("Nairobi", "KE", -1.29, 36.82, 3, 4397),
)

CURRENCY_NAMES = {
    "USD": ("US Dollar", "$", 1.0),
    "CAD": ("Canadian Dollar", "C$", 1.36),
    "MXN": ("Mexican Peso", "Mex$", 17.1),
    "BRL": ("Brazilian Real", "R$", 4.97),
    "ARS": ("Argentine Peso", "$", 840.0),
    "GBP": ("Pound Sterling", "£", 0.79),
    "EUR": ("Euro", "€", 0.92),
    "SEK": ("Swedish Krona", "kr", 10.4),
    "CHF": ("Swiss Franc", "CHF", 0.88),
    "PLN": ("Polish Zloty", "zł", 3.98),
    "TRY": ("Turkish Lira", "₺", 31.2),
    "INR": ("Indian Rupee", "₹", 82.9),
    "CNY": ("Chinese Yuan", "¥", 7.19),
    "JPY": ("Japanese Yen", "¥", 150.1),
    "KRW": ("South Korean Won", "₩", 1331.0),
    "SGD": ("Singapore Dollar", "S$", 1.34),
    "AED": ("UAE Dirham", "AED", 3.67),
    "AUD": ("Australian Dollar", "A$", 1.53),
    "NZD": ("New Zealand Dollar", "NZ$", 1.64),
    "ZAR": ("South African Rand", "R", 19.1),
    "EGP": ("Egyptian Pound", "E£", 30.9),
    "NGN": ("Nigerian Naira", "₦", 1550.0),
    "KES": ("Kenyan Shilling", "KSh", 145.0),
}

FIRST_NAMES = (
    "Ada",
    "Bruno",
    "Carla",
    "Dmitri",
    "Elena",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kira",
    "Luca",
    "Maya",
    "Nico",
    "Olga",
    "Pablo",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wes",
    "Xena",
    "Yusuf",
    "Zoe",
    "Amara",
    "Boris",
    "Celia",
    "Dario",
    "Emil",
    "Freya",
    "Gino",
    "Hana",
    "Ivan",
    "Jade",
    "Kofi",
    "Lena",
)
LAST_NAMES = (
    "Abara",
    "Brandt",
    "Castell",
    "Dunmore",
    "Eriksen",
    "Fontaine",
    "Garrow",
    "Halvorsen",
    "Ibarra",
    "Jansky",
    "Kowal",
    "Lindqvist",
    "Moreau",
    "Nakata",
    "Okafor",
    "Petrakis",
    "Quintero",
    "Rasmussen",
    "Sorensen",
    "Tanaka",
    "Ulloa",
    "Varga",
    "Whitlock",
    "Xu",
    "Yilmaz",
    "Zeller",
    "Achebe",
    "Bellamy",
    "Corvo",
    "Delacroix",
)
ADJECTIVES = (
    "Silent",
    "Golden",
    "Crimson",
    "Hidden",
    "Broken",
    "Electric",
    "Midnight",
    "Velvet",
    "Iron",
    "Paper",
    "Wild",
    "Frozen",
    "Lonely",
    "Bright",
    "Hollow",
    "Distant",
    "Secret",
    "Burning",
    "Gentle",
    "Restless",
)
NOUNS = (
    "River",
    "Harbor",
    "Garden",
    "Engine",
    "Mirror",
    "Orchard",
    "Lantern",
    "Compass",
    "Kingdom",
    "Signal",
    "Horizon",
    "Meadow",
    "Canyon",
    "Voyage",
    "Station",
    "Island",
    "Letter",
    "Crown",
    "Forest",
    "Tide",
)
MASCOTS = ("Falcons", "Rovers", "Titans", "Comets", "Wolves", "Mariners", "Lions", "Rangers", "Hawks", "Pilots")
COMPANY_STEMS = (
    "Nova",
    "Apex",
    "Brightline",
    "Cobalt",
    "Driftwood",
    "Everest",
    "Fulcrum",
    "Granite",
    "Helix",
    "Ionic",
    "Juniper",
    "Keystone",
    "Lumen",
    "Meridian",
    "Northwind",
    "Orbit",
    "Pinnacle",
    "Quarry",
    "Redwood",
    "Summit",
    "Tandem",
    "Umbra",
    "Vertex",
    "Westbrook",
    "Zephyr",
    "Alder",
    "Beacon",
    "Cascade",
    "Delta",
    "Ember",
)
INDUSTRIES = ("Technology", "Energy", "Healthcare", "Finance", "Retail", "Industrials", "Media", "Transport")
COMPANY_SUFFIXES = ("Labs", "Systems", "Holdings", "Group", "Industries", "Networks", "Partners", "Dynamics")
GENRES = ("Drama", "Comedy", "Thriller", "Science Fiction", "Animation", "Documentary", "Romance", "Horror")
MUSIC_GENRES = ("Pop", "Rock", "Jazz", "Hip Hop", "Electronic", "Classical", "Folk", "R&B")
CUISINES = ("Italian", "Mexican", "Japanese", "Indian", "French", "Thai", "Greek", "Korean", "Moroccan")
DISHES = ("Soup", "Salad", "Curry", "Pasta", "Stew", "Tacos", "Risotto", "Noodles", "Pie", "Skillet")
DISH_WORDS = ("Smoky", "Lemon", "Garlic", "Spiced", "Herb", "Creamy", "Roasted", "Sweet Chili", "Ginger", "Basil")
DIETS = ("none", "vegetarian", "vegan", "gluten-free", "keto")
INGREDIENTS = (
    "tomato",
    "onion",
    "garlic",
    "rice",
    "chicken",
    "chickpeas",
    "lentils",
    "spinach",
    "mushroom",
    "tofu",
    "potato",
    "carrot",
    "basil",
    "ginger",
    "lemon",
    "cheese",
    "beef",
    "salmon",
    "pepper",
    "coconut milk",
)
FOODS = (
    ("apple", 52, 0.3, 0.2, 14),
    ("banana", 89, 1.1, 0.3, 23),
    ("white rice", 130, 2.7, 0.3, 28),
    ("chicken breast", 165, 31, 3.6, 0),
    ("salmon", 208, 20, 13, 0),
    ("egg", 155, 13, 11, 1.1),
    ("almonds", 579, 21, 50, 22),
    ("broccoli", 34, 2.8, 0.4, 7),
    ("oats", 389, 17, 7, 66),
    ("lentils", 116, 9, 0.4, 20),
    ("cheddar", 403, 25, 33, 1.3),
    ("avocado", 160, 2, 15, 9),
    ("potato", 77, 2, 0.1, 17),
    ("tofu", 76, 8, 4.8, 1.9),
    ("yogurt", 59, 10, 0.4, 3.6),
    ("spinach", 23, 2.9, 0.4, 3.6),
    ("beef", 250, 26, 15, 0),
    ("bread", 265, 9, 3.2, 49),
    ("pasta", 131, 5, 1.1, 25),
    ("peanut butter", 588, 25, 50, 20),
)
PRODUCT_KINDS = (
    ("Headphones", "Electronics", 40, 350),
    ("Backpack", "Bags", 25, 180),
    ("Running Shoes", "Shoes", 50, 220),
    ("Coffee Maker", "Kitchen", 30, 400),
    ("Desk Lamp", "Home", 15, 120),
    ("Smart Watch", "Electronics", 90, 600),
    ("Yoga Mat", "Sports", 15, 90),
    ("Water Bottle", "Sports", 8, 45),
    ("Office Chair", "Furniture", 80, 700),
    ("Blender", "Kitchen", 35, 300),
    ("Rain Jacket", "Clothing", 45, 260),
    ("Bluetooth Speaker", "Electronics", 25, 300),
)
BRANDS = ("Arlo & Finch", "Brightpeak", "Corelle Works", "Dunlin", "Everpine", "Foxglove", "Gantry", "Hearthstone")
PLATFORMS = ("PC", "PlayStation 5", "Xbox Series X", "Nintendo Switch", "Mobile")
GAME_GENRES = ("Action", "Puzzle", "Strategy", "Racing", "Role-playing", "Platformer", "Simulation")
TOPICS = ("technology", "business", "sports", "science", "health", "politics", "entertainment", "travel")
SOURCES = ("The Daily Ledger", "Harbor Times", "Metro Wire", "Global Dispatch", "The Morning Post", "Signal News")
EVENT_KINDS = ("concert", "conference", "festival", "exhibition", "marathon", "theatre")
AIRLINES = ("SkyBridge", "Aurora Air", "Blue Meridian", "Coastal Wings", "Polar Express Air")
REGISTRARS = ("NameWharf", "DomainDock", "RegistryOne", "HostHarbor")
TLDS = (".com", ".net", ".org", ".io", ".dev")
JOB_TITLES = (
    "Data Analyst",
    "Software Engineer",
    "Product Manager",
    "Nurse",
    "Accountant",
    "Graphic Designer",
    "Sales Associate",
    "Mechanical Engineer",
    "Teacher",
    "Marketing Specialist",
    "DevOps Engineer",
    "Chef",
)
SUBJECTS = ("Mathematics", "Computer Science", "History", "Biology", "Economics", "Languages", "Art", "Physics")
LEVELS = ("beginner", "intermediate", "advanced")
DRUG_CLASSES = ("analgesic", "antibiotic", "antihistamine", "antacid", "statin", "antidepressant")
DRUG_STEMS = ("Calm", "Dura", "Flex", "Neo", "Pax", "Quel", "Rexa", "Sola", "Tera", "Vexa", "Zolo", "Lumi")
DRUG_ENDINGS = ("prin", "cillin", "tadine", "zole", "statin", "xetine")
SIDE_EFFECTS = ("nausea", "headache", "dizziness", "drowsiness", "dry mouth", "rash", "insomnia", "fatigue")
DEVICE_TYPES = ("phone", "tablet", "laptop", "smartwatch", "router", "camera")
CARRIERS = ("ParcelPoint", "QuickShip", "Northstar Freight", "Velo Courier")
PARCEL_STATUSES = ("label created", "in transit", "out for delivery", "delivered", "held at customs")
IMAGE_LABELS = (
    "dog",
    "cat",
    "car",
    "tree",
    "beach",
    "mountain",
    "person",
    "bicycle",
    "building",
    "food",
    "sky",
    "boat",
)
WEATHER_CONDITIONS = ("Clear", "Partly cloudy", "Cloudy", "Rain", "Showers", "Thunderstorm", "Snow", "Fog", "Windy")
# A small dictionary: word, part of speech, meaning (ours), synonyms, Spanish, French, German.
WORDS = (
    ("house", "noun", "a building where people live", ("home", "dwelling"), "casa", "maison", "Haus"),
    ("water", "noun", "the clear liquid that falls as rain", ("liquid",), "agua", "eau", "Wasser"),
    ("quick", "adjective", "moving or done at speed", ("fast", "rapid", "swift"), "rápido", "rapide", "schnell"),
    (
        "happy",
        "adjective",
        "feeling or showing pleasure",
        ("glad", "cheerful", "joyful"),
        "feliz",
        "heureux",
        "glücklich",
    ),
    ("book", "noun", "pages bound together to be read", ("volume", "tome"), "libro", "livre", "Buch"),
    ("friend", "noun", "a person one knows and likes", ("companion", "ally"), "amigo", "ami", "Freund"),
    ("city", "noun", "a large town", ("metropolis", "town"), "ciudad", "ville", "Stadt"),
    ("run", "verb", "to move fast on foot", ("sprint", "dash"), "correr", "courir", "laufen"),
    ("eat", "verb", "to take food into the body", ("consume", "dine"), "comer", "manger", "essen"),
    ("small", "adjective", "of little size", ("little", "tiny"), "pequeño", "petit", "klein"),
    ("bright", "adjective", "giving out much light", ("shining", "vivid"), "brillante", "lumineux", "hell"),
    ("travel", "verb", "to go from one place to another", ("journey", "tour"), "viajar", "voyager", "reisen"),
    ("music", "noun", "sounds arranged to be pleasant", ("melody", "tunes"), "música", "musique", "Musik"),
    ("tree", "noun", "a tall plant with a wooden trunk", ("timber",), "árbol", "arbre", "Baum"),
    ("morning", "noun", "the early part of the day", ("dawn", "forenoon"), "mañana", "matin", "Morgen"),
    ("strong", "adjective", "having great power", ("powerful", "sturdy"), "fuerte", "fort", "stark"),
    ("write", "verb", "to put words on a surface", ("compose", "note"), "escribir", "écrire", "schreiben"),
    ("market", "noun", "a place where goods are sold", ("bazaar", "fair"), "mercado", "marché", "Markt"),
    ("cold", "adjective", "of low temperature", ("chilly", "icy"), "frío", "froid", "kalt"),
    ("bridge", "noun", "a structure that crosses a gap", ("span", "crossing"), "puente", "pont", "Brücke"),
    ("learn", "verb", "to gain knowledge of something", ("study", "master"), "aprender", "apprendre", "lernen"),
    ("garden", "noun", "ground where plants are grown", ("yard", "plot"), "jardín", "jardin", "Garten"),
    ("calm", "adjective", "free from excitement", ("peaceful", "serene"), "tranquilo", "calme", "ruhig"),
    ("money", "noun", "coins and notes used to buy things", ("cash", "funds"), "dinero", "argent", "Geld"),
)


def rng(*key: object) -> random.Random:
    """A random stream named by ``key``: string seeds are hashed with SHA-512, so every process agrees."""
    return random.Random("rapidapi-world/" + "/".join(map(str, key)))


def unit(*key: object) -> float:
    """A number in [0, 1) named by ``key`` (for values computed on demand, such as a day's weather)."""
    digest = hashlib.sha256("/".join(map(str, key)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


@dataclass
class World:
    """The tables, and an index of each by id."""

    tables: dict[str, list[dict[str, Any]]]
    index: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {name: {row["id"]: row for row in rows} for name, rows in self.tables.items()}

    def get(self, table: str, key: Any) -> dict[str, Any] | None:
        return self.index[table].get(str(key))

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables[table]


def _person(r: random.Random) -> str:
    return f"{r.choice(FIRST_NAMES)} {r.choice(LAST_NAMES)}"


def _unique(r: random.Random, make: Any, count: int) -> list[str]:
    """``count`` distinct values of ``make(r)`` (names must be unique to be looked up by name)."""
    seen: dict[str, None] = {}
    while len(seen) < count:
        seen.setdefault(make(r), None)
    return list(seen)


def _places() -> dict[str, list[dict[str, Any]]]:
    countries = [
        {
            "id": code,
            "name": name,
            "region": region,
            "currency": currency,
            "calling_code": calling,
            "language": language,
            "population": int(population * 1_000_000),
        }
        for code, name, region, currency, calling, language, population in COUNTRIES
    ]
    cities = []
    for n, (name, country, lat, lon, offset, thousands) in enumerate(CITIES, start=1):
        cities.append(
            {
                "id": str(1000 + n),
                "name": name,
                "country": country,
                "lat": lat,
                "lon": lon,
                "utc_offset": offset,
                "population": thousands * 1000,
                "elevation_m": int(unit("elevation", name) * 600),
            }
        )
    capitals = {"US": "New York", "CA": "Toronto", "AU": "Sydney", "TR": "Istanbul", "IN": "Delhi", "CN": "Beijing"}
    for country in countries:
        own = [c["name"] for c in cities if c["country"] == country["id"]]
        country["largest_city"] = capitals.get(country["id"], own[0])
    currencies = [
        {"id": code, "name": name, "symbol": symbol, "usd_rate": rate}
        for code, (name, symbol, rate) in CURRENCY_NAMES.items()
    ]
    airports = [
        {
            "id": (city["name"][:2] + city["name"][-1]).upper(),
            "name": f"{city['name']} International",
            "city_id": city["id"],
            "country": city["country"],
        }
        for city in cities
    ]
    # Airport codes must be unique: later clashes take the city's first three letters, then a digit.
    seen: set[str] = set()
    for airport, city in zip(airports, cities, strict=True):
        code = airport["id"]
        if code in seen:
            code = city["name"].replace(" ", "")[:3].upper()
        while code in seen:
            code = code[:2] + str(len(seen) % 10)
        airport["id"] = code
        seen.add(code)
    return {"countries": countries, "cities": cities, "currencies": currencies, "airports": airports}


def _business(cities: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    r = rng("business")
    names = _unique(r, lambda r: f"{r.choice(COMPANY_STEMS)} {r.choice(COMPANY_SUFFIXES)}", 60)
    companies, stocks, tickers = [], [], set()
    for n, name in enumerate(names, start=1):
        ticker = "".join(word[0] for word in name.split()) + name.split()[0][1:3].upper()
        while ticker in tickers:
            ticker = ticker[:-1] + chr(ord("A") + len(tickers) % 26)
        tickers.add(ticker)
        city = r.choice(cities)
        industry = r.choice(INDUSTRIES)
        companies.append(
            {
                "id": f"C{n:03d}",
                "name": name,
                "industry": industry,
                "founded": r.randint(1950, 2020),
                "employees": r.choice((40, 120, 800, 2500, 12000, 56000)) + r.randint(0, 30),
                "city_id": city["id"],
                "ceo": _person(r),
                "ticker": ticker,
            }
        )
        stocks.append(
            {
                "id": ticker,
                "company_id": f"C{n:03d}",
                "name": name,
                "sector": industry,
                "exchange": r.choice(("NASDAQ", "NYSE", "LSE", "XETRA")),
                "base_price": round(r.uniform(8, 420), 2),
                "shares_outstanding": r.randint(20, 3000) * 1_000_000,
            }
        )
    coins = []
    for n, stem in enumerate(("Aster", "Bolt", "Cinder", "Dune", "Ether", "Flux", "Glint", "Halo", "Ion", "Jolt")):
        coins.append(
            {
                "id": stem[:3].upper() + "X",
                "name": f"{stem}coin",
                "price_usd": round(r.uniform(0.05, 3000), 4),
                "supply": r.randint(10, 900) * 1_000_000,
                "launched": 2012 + n,
            }
        )
    return {"companies": companies, "stocks": stocks, "coins": coins}


def _sports(cities: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    r = rng("sports")
    leagues_spec = (
        ("Premier Coast League", "football", "GB"),
        ("Continental Football Cup", "football", "ES"),
        ("North American Hoops", "basketball", "US"),
        ("Pacific Baseball Circuit", "baseball", "JP"),
        ("Alpine Hockey League", "ice hockey", "CH"),
        ("Southern Rugby Series", "rugby", "AU"),
    )
    leagues, teams, players, matches = [], [], [], []
    positions = {
        "football": ("goalkeeper", "defender", "midfielder", "forward"),
        "basketball": ("guard", "forward", "center"),
        "baseball": ("pitcher", "catcher", "infielder", "outfielder"),
        "ice hockey": ("goaltender", "defenseman", "winger", "center"),
        "rugby": ("prop", "lock", "fly-half", "wing"),
    }
    used_cities: set[str] = set()
    for ln, (name, sport, country) in enumerate(leagues_spec, start=1):
        league_id = f"L{ln}"
        leagues.append({"id": league_id, "name": name, "sport": sport, "country": country, "season": "2025-26"})
        local = [c for c in cities if c["id"] not in used_cities]
        chosen = r.sample(local, 8)
        team_ids = []
        for city in chosen:
            used_cities.add(city["id"])
            team_id = str(200 + len(teams) + 1)
            team_ids.append(team_id)
            teams.append(
                {
                    "id": team_id,
                    "name": f"{city['name']} {r.choice(MASCOTS)}",
                    "league_id": league_id,
                    "city_id": city["id"],
                    "founded": r.randint(1880, 2010),
                    "stadium": f"{r.choice(ADJECTIVES)} {r.choice(('Park', 'Arena', 'Field', 'Dome'))}",
                    "coach": _person(r),
                }
            )
            for _ in range(6):
                players.append(
                    {
                        "id": str(5000 + len(players) + 1),
                        "name": _person(r),
                        "team_id": team_id,
                        "position": r.choice(positions[sport]),
                        "age": r.randint(18, 37),
                        "nationality": r.choice(COUNTRIES)[1],
                        "scored": r.randint(0, 30),
                        "assists": r.randint(0, 20),
                        "appearances": r.randint(5, 38),
                    }
                )
        for round_number in range(1, 8):  # a round-robin: every team meets every other once
            for home, away in _round_pairs(team_ids, round_number):
                matches.append(
                    {
                        "id": str(90000 + len(matches) + 1),
                        "league_id": league_id,
                        "round": round_number,
                        "date": day(-7 * (8 - round_number)),
                        "home_team_id": home,
                        "away_team_id": away,
                        "home_score": r.randint(0, 5),
                        "away_score": r.randint(0, 5),
                    }
                )
    # Player names are unique across the table (a search by name finds one player).
    seen: set[str] = set()
    for player in players:
        while player["name"] in seen:
            player["name"] = _person(r)
        seen.add(player["name"])
    return {"leagues": leagues, "teams": teams, "players": players, "matches": matches}


def _round_pairs(team_ids: list[str], round_number: int) -> list[tuple[str, str]]:
    """Round ``round_number`` (1..n-1) of the circle method's round-robin: the first team stays, the
    others rotate by one place each round."""
    first, rest = team_ids[0], team_ids[1:]
    shift = (round_number - 1) % len(rest)
    order = [first, *rest[shift:], *rest[:shift]]
    n = len(order)
    pairs = [(order[i], order[n - 1 - i]) for i in range(n // 2)]
    return pairs if round_number % 2 else [(away, home) for home, away in pairs]


def _titles(r: random.Random, count: int, pattern: str) -> list[str]:
    return _unique(r, lambda r: pattern.format(a=r.choice(ADJECTIVES), n=r.choice(NOUNS)), count)


def _media() -> dict[str, list[dict[str, Any]]]:
    r = rng("media")
    people = [
        {"id": f"P{n:04d}", "name": name, "born": r.randint(1940, 2002), "country": r.choice(COUNTRIES)[0]}
        for n, name in enumerate(_unique(r, _person, 120), start=1)
    ]
    movies = []
    for n, title in enumerate(_titles(r, 160, "The {a} {n}"), start=1):
        cast = r.sample(people, 3)
        movies.append(
            {
                "id": f"tt{7000000 + n * 37}",
                "title": title,
                "year": r.randint(1985, 2025),
                "genre": r.choice(GENRES),
                "director_id": r.choice(people)["id"],
                "cast_ids": [p["id"] for p in cast],
                "rating": round(r.uniform(4.0, 9.3), 1),
                "runtime_min": r.randint(82, 178),
                "box_office_usd": r.randint(1, 900) * 1_000_000,
                "language": r.choice(("English", "French", "Spanish", "Japanese", "Korean")),
            }
        )
    artists, albums, songs = [], [], []
    for n, name in enumerate(_unique(r, lambda r: f"{r.choice(ADJECTIVES)} {r.choice(NOUNS)}s", 50), start=1):
        artists.append(
            {
                "id": f"ar{n:03d}",
                "name": name,
                "genre": r.choice(MUSIC_GENRES),
                "country": r.choice(COUNTRIES)[0],
                "formed": r.randint(1965, 2021),
                "monthly_listeners": r.randint(5, 9000) * 1000,
            }
        )
    song_titles = iter(_titles(r, 400, "{a} {n}"))
    for artist in artists:
        for _ in range(2):
            album_id = f"al{len(albums) + 1:04d}"
            year = r.randint(max(artist["formed"], 1970), 2025)
            tracks = [next(song_titles) for _ in range(4)]
            albums.append(
                {
                    "id": album_id,
                    "title": f"{r.choice(NOUNS)} of {r.choice(NOUNS)}s",
                    "artist_id": artist["id"],
                    "year": year,
                    "tracks": len(tracks),
                }
            )
            for title in tracks:
                songs.append(
                    {
                        "id": f"so{len(songs) + 1:05d}",
                        "title": title,
                        "artist_id": artist["id"],
                        "album_id": album_id,
                        "year": year,
                        "duration_s": r.randint(140, 420),
                        "plays": r.randint(10, 50000) * 1000,
                        "genre": artist["genre"],
                    }
                )
    books = []
    for n, title in enumerate(_titles(r, 120, "A {a} {n}"), start=1):
        books.append(
            {
                "id": f"978{n:010d}",
                "title": title,
                "author": _person(r),
                "year": r.randint(1950, 2025),
                "pages": r.randint(120, 900),
                "genre": r.choice(("novel", "history", "science", "poetry", "memoir")),
                "publisher": f"{r.choice(NOUNS)} Press",
            }
        )
    games = []
    for n, title in enumerate(_titles(r, 90, "{n} of the {a} {n}"), start=1):
        games.append(
            {
                "id": f"g{n:04d}",
                "title": title,
                "platform": r.choice(PLATFORMS),
                "genre": r.choice(GAME_GENRES),
                "year": r.randint(2000, 2025),
                "rating": r.randint(40, 98),
                "developer": f"{r.choice(COMPANY_STEMS)} Games",
                "price_usd": r.choice((0, 9.99, 19.99, 39.99, 69.99)),
            }
        )
    articles = []
    for n in range(1, 201):
        topic = r.choice(TOPICS)
        articles.append(
            {
                "id": f"n{n:05d}",
                "title": f"{r.choice(ADJECTIVES)} {r.choice(NOUNS)}: what the {topic} world is watching",
                "source": r.choice(SOURCES),
                "topic": topic,
                "date": day(-r.randint(0, HISTORY_DAYS)),
                "author": _person(r),
                "words": r.randint(300, 2500),
            }
        )
    return {
        "people": people,
        "movies": movies,
        "artists": artists,
        "albums": albums,
        "songs": songs,
        "books": books,
        "games": games,
        "articles": articles,
    }


def _living(cities: list[dict[str, Any]], companies: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    r = rng("living")
    recipes = []
    for n, name in enumerate(
        _unique(r, lambda r: f"{r.choice(DISH_WORDS)} {r.choice(CUISINES)} {r.choice(DISHES)}", 120), start=1
    ):
        recipes.append(
            {
                "id": f"r{n:04d}",
                "name": name,
                "cuisine": name.split()[-2],
                "ingredients": sorted(r.sample(INGREDIENTS, 5)),
                "calories": r.randint(180, 950),
                "prep_minutes": r.choice((10, 15, 20, 30, 45, 60, 90)),
                "diet": r.choice(DIETS),
                "servings": r.randint(1, 6),
            }
        )
    foods = [
        {"id": f"f{n:03d}", "name": name, "calories": kcal, "protein_g": protein, "fat_g": fat, "carbs_g": carbs}
        for n, (name, kcal, protein, fat, carbs) in enumerate(FOODS, start=1)
    ]
    products = []
    names = _unique(r, lambda r: f"{r.choice(BRANDS)} {r.choice(ADJECTIVES)} {r.choice(PRODUCT_KINDS)[0]}", 220)
    for n, name in enumerate(names, start=1):
        kind = next(k for k in PRODUCT_KINDS if name.endswith(k[0]))
        brand = next(b for b in BRANDS if name.startswith(b))
        products.append(
            {
                "id": f"B0{n:06d}",
                "name": name,
                "brand": brand,
                "category": kind[1],
                "price_usd": round(r.uniform(kind[2], kind[3]), 2),
                "rating": round(r.uniform(2.5, 5.0), 1),
                "reviews": r.randint(0, 8000),
                "in_stock": r.random() > 0.15,
            }
        )
    jobs = []
    for n in range(1, 181):
        company, city, title = r.choice(companies), r.choice(cities), r.choice(JOB_TITLES)
        low = r.randint(30, 150) * 1000
        jobs.append(
            {
                "id": f"j{n:05d}",
                "title": title,
                "company_id": company["id"],
                "city_id": city["id"],
                "salary_min": low,
                "salary_max": low + r.randint(5, 60) * 1000,
                "remote": r.random() < 0.3,
                "posted": day(-r.randint(0, HISTORY_DAYS)),
                "type": r.choice(("full-time", "part-time", "contract")),
            }
        )
    events = []
    for n, name in enumerate(_titles(r, 140, "{a} {n} Festival"), start=1):
        city = r.choice(cities)
        events.append(
            {
                "id": f"e{n:05d}",
                "name": name.replace(" Festival", f" {r.choice(EVENT_KINDS).title()}"),
                "city_id": city["id"],
                "date": day(r.randint(1, 60)),
                "kind": r.choice(EVENT_KINDS),
                "venue": f"{r.choice(NOUNS)} Hall",
                "price_usd": r.choice((0, 15, 25, 40, 60, 95, 150)),
                "capacity": r.choice((200, 800, 2500, 12000, 40000)),
            }
        )
    hotels = []
    for n, name in enumerate(_unique(r, lambda r: f"Hotel {r.choice(ADJECTIVES)} {r.choice(NOUNS)}", 150), start=1):
        city = r.choice(cities)
        hotels.append(
            {
                "id": f"h{n:04d}",
                "name": name,
                "city_id": city["id"],
                "stars": r.randint(2, 5),
                "price_per_night_usd": r.randint(45, 650),
                "rating": round(r.uniform(6.0, 9.8), 1),
                "rooms": r.randint(20, 600),
            }
        )
    return {"recipes": recipes, "foods": foods, "products": products, "jobs": jobs, "events": events, "hotels": hotels}


def _technical() -> dict[str, list[dict[str, Any]]]:
    r = rng("technical")
    domains = []
    for n, stem in enumerate(_unique(r, lambda r: f"{r.choice(ADJECTIVES)}{r.choice(NOUNS)}".lower(), 100)):
        name = stem + TLDS[n % len(TLDS)]
        domains.append(
            {
                "id": name,
                "ip": f"{r.randint(11, 223)}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
                "registrar": r.choice(REGISTRARS),
                "created": f"{r.randint(1998, 2024)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
                "ssl_expires": day(r.randint(-20, 400)),
                "status": r.choice(("up", "up", "up", "down", "degraded")),
                "response_ms": r.randint(40, 2400),
                "blacklisted": r.random() < 0.08,
            }
        )
    words = [
        {
            "id": word,
            "word": word,
            "part_of_speech": pos,
            "meaning": meaning,
            "synonyms": list(synonyms),
            "es": es,
            "fr": fr,
            "de": de,
        }
        for word, pos, meaning, synonyms, es, fr, de in WORDS
    ]
    drugs = []
    for n, name in enumerate(_unique(r, lambda r: r.choice(DRUG_STEMS) + r.choice(DRUG_ENDINGS), 50), start=1):
        drugs.append(
            {
                "id": f"d{n:03d}",
                "name": name,
                "drug_class": DRUG_CLASSES[next(i for i, e in enumerate(DRUG_ENDINGS) if name.endswith(e))],
                "max_daily_mg": r.choice((200, 400, 1000, 1200, 3000, 4000)),
                "side_effects": sorted(r.sample(SIDE_EFFECTS, 3)),
                "prescription": r.random() < 0.6,
            }
        )
    courses = []
    for n, title in enumerate(_titles(r, 90, "{a} {n}"), start=1):
        subject = r.choice(SUBJECTS)
        courses.append(
            {
                "id": f"cs{n:04d}",
                "title": f"{subject}: {title}",
                "subject": subject,
                "level": r.choice(LEVELS),
                "hours": r.randint(4, 80),
                "rating": round(r.uniform(3.0, 5.0), 1),
                "instructor": _person(r),
                "price_usd": r.choice((0, 19, 49, 99, 199)),
            }
        )
    campaigns = []
    for n in range(1, 81):
        impressions = r.randint(5, 900) * 1000
        campaigns.append(
            {
                "id": f"ad{n:04d}",
                "name": f"{r.choice(ADJECTIVES)} {r.choice(NOUNS)} campaign",
                "advertiser": f"{r.choice(COMPANY_STEMS)} {r.choice(COMPANY_SUFFIXES)}",
                "budget_usd": r.randint(1, 200) * 500,
                "impressions": impressions,
                "clicks": int(impressions * r.uniform(0.002, 0.06)),
                "channel": r.choice(("search", "social", "video", "display")),
            }
        )
    devices = []
    for n in range(1, 91):
        kind = r.choice(DEVICE_TYPES)
        maker = r.choice(COMPANY_STEMS)
        devices.append(
            {
                "id": f"dv{n:04d}",
                "model": f"{maker} {kind.title()} {r.randint(2, 19)}",
                "maker": maker,
                "type": kind,
                "released": r.randint(2015, 2025),
                "battery_mah": r.randint(8, 60) * 100,
                "price_usd": r.randint(40, 2400),
            }
        )
    parcels = []
    for n in range(1, 121):
        parcels.append(
            {
                "id": f"TRK{n * 7919 % 1000003:07d}",
                "carrier": r.choice(CARRIERS),
                "origin": r.choice(CITIES)[0],
                "destination": r.choice(CITIES)[0],
                "status": r.choice(PARCEL_STATUSES),
                "weight_kg": round(r.uniform(0.2, 30), 1),
                "shipped": day(-r.randint(1, 20)),
            }
        )
    images = []
    for n in range(1, 81):
        labels = sorted(r.sample(IMAGE_LABELS, 3))
        width = r.choice((640, 800, 1024, 1280, 1920, 3000))
        images.append(
            {
                "id": f"img{n:04d}",
                "url": f"https://images.toolbench.local/img{n:04d}.jpg",
                "width": width,
                "height": int(width * r.choice((0.5625, 0.75, 1.0, 1.5))),
                "format": r.choice(("jpeg", "png", "webp")),
                "labels": labels,
                "faces": r.choice((0, 0, 1, 2, 3, 5)),
                "text": r.choice(("", "", "OPEN", "EXIT", "SALE 50%")),
                "size_kb": r.randint(40, 4800),
            }
        )
    return {
        "domains": domains,
        "words": words,
        "drugs": drugs,
        "courses": courses,
        "campaigns": campaigns,
        "devices": devices,
        "parcels": parcels,
        "images": images,
    }


def _flights(airports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A few flights a day between some airport pairs, over the next week."""
    r = rng("flights")
    flights = []
    pairs = [(a, b) for a in airports for b in airports if a is not b and unit("route", a["id"], b["id"]) < 0.08]
    for origin, destination in pairs:
        airline = r.choice(AIRLINES)
        number = f"{airline[:2].upper()}{r.randint(100, 9999)}"
        for offset in range(FORECAST_DAYS):
            flights.append(
                {
                    "id": f"{number}-{day(offset)}",
                    "flight_number": number,
                    "airline": airline,
                    "origin": origin["id"],
                    "destination": destination["id"],
                    "date": day(offset),
                    "departure": f"{r.randint(5, 22):02d}:{r.choice(('00', '15', '30', '45'))}",
                    "duration_min": r.randint(45, 900),
                    "price_usd": r.randint(60, 1400),
                }
            )
    return flights


@cache
def build_world() -> World:
    """The world, built once per process (it is the same in every process)."""
    tables = _places()
    tables.update(_business(tables["cities"]))
    tables.update(_sports(tables["cities"]))
    tables.update(_media())
    tables.update(_living(tables["cities"], tables["companies"]))
    tables.update(_technical())
    tables["flights"] = _flights(tables["airports"])
    return World(tables)


# ---------------------------------------------------------------------- values computed on demand
def weather(city: dict[str, Any], offset: int) -> dict[str, Any]:
    """A city's weather ``offset`` days from today (negative: the past)."""
    lat = abs(city["lat"])
    # Northern winter in March: colder with latitude; the south is in late summer.
    base = 27 - lat * 0.45 if city["lat"] >= 0 else 30 - lat * 0.3
    mean = base + (unit("temp", city["id"], offset) - 0.5) * 8
    spread = 3 + unit("spread", city["id"], offset) * 8
    wet = unit("rain", city["id"], offset)
    condition = WEATHER_CONDITIONS[int(unit("sky", city["id"], offset) * len(WEATHER_CONDITIONS))]
    if mean < 0 and condition in ("Rain", "Showers"):
        condition = "Snow"
    return {
        "date": day(offset),
        "temp_c": round(mean, 1),
        "temp_min_c": round(mean - spread / 2, 1),
        "temp_max_c": round(mean + spread / 2, 1),
        "humidity": int(35 + wet * 60),
        "wind_kph": round(unit("wind", city["id"], offset) * 45, 1),
        "precipitation_mm": round(wet * 14, 1) if condition in ("Rain", "Showers", "Thunderstorm", "Snow") else 0.0,
        "condition": condition,
    }


def stock_price(stock: dict[str, Any], offset: int) -> dict[str, Any]:
    """A stock's trading day ``offset`` days from today (0 = today's close; only the past is known)."""
    price = stock["base_price"]
    for step in range(-HISTORY_DAYS, offset + 1):
        price *= 1 + (unit("drift", stock["id"], step) - 0.5) * 0.06
    open_ = price * (1 + (unit("open", stock["id"], offset) - 0.5) * 0.02)
    return {
        "date": day(offset),
        "open": round(open_, 2),
        "close": round(price, 2),
        "high": round(max(open_, price) * (1 + unit("high", stock["id"], offset) * 0.02), 2),
        "low": round(min(open_, price) * (1 - unit("low", stock["id"], offset) * 0.02), 2),
        "volume": int(200_000 + unit("volume", stock["id"], offset) * 9_800_000),
    }


def convert(world: World, amount: float, source: str, target: str) -> float:
    """``amount`` of currency ``source`` in ``target`` at today's rates."""
    rate_from = world.get("currencies", source)
    rate_to = world.get("currencies", target)
    assert rate_from is not None and rate_to is not None
    return amount / rate_from["usd_rate"] * rate_to["usd_rate"]

"""The hub's catalog: 49 RapidAPI categories, their tools, the tools' APIs and named collections.

Each category names its tools and the API groups they draw from: a world table's generic APIs
(``"movies"``) or a special-purpose service (``"weather"``). Tool ``i`` of a category offers the
group ``i`` (round robin) in full and, for variety, two APIs of the next group; generic tables get a
different mix of API kinds and a different naming style per tool. ``hub()`` builds the catalog once.

``tool_json`` writes a tool as ToolBench's tool JSON (``data/toolenv/tools/<Category>/<tool>.json``):
name, description, host, and ``api_list`` entries with url, method, parameters and a
``template_response`` made from the API's answer to its example arguments.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from toolbench.mock_services.rapidapi.domains import ASKERS, DOMAINS, Question, domain_apis
from toolbench.mock_services.rapidapi.functions import function_name, standardize
from toolbench.mock_services.rapidapi.hub import Api, Tool, call
from toolbench.mock_services.rapidapi.questions import ASKS
from toolbench.mock_services.rapidapi.services import SERVICES
from toolbench.mock_services.rapidapi.world import build_world

# category: (its groups, its tools' names)
CATEGORIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Advertising": (("campaigns", "ads"), ("AdPulse Metrics", "Campaign Ledger", "ClickScope", "Banner Bureau")),
    "Artificial_Intelligence_Machine_Learning": (
        ("text", "vision", "dictionary"),
        ("NeuroText", "Perceptor Vision", "Lexi Model", "Cortex NLP", "InferKit"),
    ),
    "Business": (("companies", "jobs", "stocks"), ("Firmographics", "Company Atlas", "Biz Registry", "Corporate Lens")),
    "Business_Software": (
        ("payments", "companies", "storage"),
        ("LedgerDesk", "InvoiceFlow", "Workspace Vault", "OpsBoard"),
    ),
    "Commerce": (("products", "cart"), ("ShopGrid", "Price Harbor", "Retail Radar", "CartCraft")),
    "Communication": (("chat", "messaging"), ("Channel Relay", "TalkBridge", "Signal Post", "Huddle Line")),
    "Cryptography": (("codes", "coins"), ("CipherKit", "HashSmith", "Encode Express", "Token Vault")),
    "Cybersecurity": (
        ("security", "domains"),
        ("ThreatLens", "CertWatch", "PassGuard", "Domain Sentinel", "ShieldScan"),
    ),
    "Data": (
        ("countries", "cities", "companies"),
        ("World Data Hub", "Open Facts", "DataMint", "Census Point", "InfoGrid"),
    ),
    "Database": (("books", "people", "domains"), ("RecordBase", "Catalog DB", "Index Keeper", "Archive Query")),
    "Devices": (("devices",), ("Gadget Specs", "DeviceDB", "Spec Sheet", "Hardware Finder")),
    "eCommerce": (("products", "cart"), ("MarketNest", "Bazaar Hub", "Storefront API", "BuyBox Data", "Deal Finder")),
    "Education": (("courses", "dictionary"), ("Course Compass", "StudyHall", "Learnly", "Syllabus Hub")),
    "Email": (("messaging",), ("MailCheck Pro", "Inbox Relay", "Postmark Lite", "VerifyMail")),
    "Energy": (("energy", "devices"), ("GridPrice", "Carbon Meter", "SunYield", "PowerPulse")),
    "Entertainment": (
        ("movies", "games", "events"),
        ("ShowTime Guide", "FunFinder", "Marquee", "Leisure Index", "PopCulture DB"),
    ),
    "Events": (("events", "cities"), ("EventScout", "Happenings", "Ticket Radar", "Gather Guide")),
    "Finance": (
        ("stocks", "companies"),
        ("MarketStack Lite", "Ticker Tape", "Equity Lens", "StockPulse", "Quote Engine"),
    ),
    "Financial": (
        ("currency", "coins", "stocks"),
        ("FX Rates Now", "Currency Bridge", "CoinCap Lite", "Exchange Desk", "MoneyMatters"),
    ),
    "Food": (
        ("recipes", "foods", "health"),
        ("Recipe Box", "Kitchen Companion", "FoodFacts", "Chef's Table", "Pantry Pal"),
    ),
    "Gaming": (("games",), ("GameBase", "Player Hub", "Arcade Index", "Quest Catalog")),
    "Health_and_Fitness": (("health", "foods"), ("FitCalc", "Body Metrics", "Nutri Scan", "Active Life")),
    "Jobs": (("jobs", "companies"), ("JobBoard Plus", "Career Finder", "Hire Hub", "Work Radar")),
    "Location": (("geo", "cities", "countries"), ("GeoPoint", "Place Finder", "LocateIt", "City Atlas", "Where Now")),
    "Logistics": (("logistics", "parcels"), ("ParcelTrack", "ShipRate", "Freight Finder", "Courier Hub")),
    "Mapping": (("geo", "cities"), ("MapCore", "Route Ruler", "Coordinate Kit", "Atlas Tiles")),
    "Media": (("articles", "books", "songs"), ("Media Monitor", "Content Hub", "Press Index", "Library Lens")),
    "Medical": (("drugs",), ("MedIndex", "Drug Facts", "Pharma Lookup", "Dose Guide")),
    "Monitoring": (("security", "domains"), ("UptimeBot", "PingBoard", "SiteWatch", "Status Radar")),
    "Movies": (("movies", "people"), ("Movie Database Lite", "FilmFinder", "CineScope", "Reel Facts", "Screen Index")),
    "Music": (
        ("artists", "albums", "songs"),
        ("Tune Index", "SoundBase", "Chart Tracker", "Lyric Lane", "Beat Finder"),
    ),
    "News_Media": (("articles",), ("Headline Hub", "NewsWire Lite", "Daily Brief", "Press Feed", "Story Stream")),
    "Other": (("utils", "dictionary"), ("Misc Toolbox", "Handy Helpers", "Everyday API", "Odds and Ends")),
    "Payments": (("payments", "currency"), ("PayFlow", "Checkout Rail", "Charge Point", "Settle Up")),
    "Reward": (("rewards",), ("PointsPal", "Loyalty Loop", "Perk Engine", "Reward Ledger")),
    "Science": (("utils", "foods"), ("SciCalc", "Lab Helper", "Unit Lab", "Formula Kit")),
    "Search": (
        ("books", "movies", "products", "articles"),
        ("OmniSearch", "Seek Engine", "FindAll", "Query Hub", "LookFar"),
    ),
    "SMS": (("messaging",), ("TextBlast", "SMS Gateway Lite", "Ping Me", "Notify SMS")),
    "Social": (("chat", "people", "articles"), ("Social Pulse", "Community Hub", "Friend Graph", "Share Space")),
    "Sports": (
        ("sports", "teams", "players", "leagues"),
        ("ScoreLine", "League Ledger", "Player Stats Hub", "Matchday Live", "Fixture Finder", "Sports Almanac"),
    ),
    "Storage": (("storage",), ("CloudLocker", "FileDrop", "Blob Box", "Stash")),
    "Text_Analysis": (
        ("text", "dictionary"),
        ("TextLens", "Sentiment Scope", "WordSmith", "Readable", "Keyword Miner"),
    ),
    "Tools": (
        ("links", "codes", "utils"),
        ("Link Shortener Pro", "DevKit", "Toolsmith", "Swiss Army API", "Quick Utils"),
    ),
    "Transportation": (("flights", "parcels", "geo"), ("Transit Hub", "Flight Board", "Route Finder", "Travel Legs")),
    "Translation": (("dictionary", "text"), ("Translate Lite", "Polyglot", "WordBridge", "Lingo API")),
    "Travel": (
        ("hotels", "flights", "weather"),
        ("Trip Planner", "Stay Finder", "Wanderlust API", "Hotel Hub", "Journey Kit"),
    ),
    "Video_Images": (("vision", "images"), ("PixelForge", "Image Kit", "Frame Lab", "Thumbnailer")),
    "Visual_Recognition": (("vision",), ("VisionAI Lite", "See Scan", "Object Finder", "Face Count")),
    "Weather": (("weather", "cities"), ("WeatherNow", "SkyCast", "ClimaData", "Forecast Lab", "Meteo Point")),
}

# Named collections (ToolBench's I3 draws its tools from one): a name and the categories it spans.
COLLECTIONS: dict[str, tuple[str, ...]] = {
    "Trip Planning": ("Travel", "Weather", "Mapping", "Financial", "Location", "Events"),
    "Personal Finance": ("Finance", "Financial", "Payments", "Reward", "Business"),
    "Sports Fans": ("Sports", "News_Media", "Events", "Weather"),
    "Food and Health": ("Food", "Health_and_Fitness", "Medical"),
    "Developer Toolkit": ("Tools", "Cryptography", "Cybersecurity", "Monitoring", "Storage"),
    "Media Night": ("Movies", "Music", "Entertainment", "Gaming", "Video_Images"),
    "Messaging": ("Email", "SMS", "Communication", "Social"),
    "Online Shopping": ("eCommerce", "Commerce", "Logistics", "Payments"),
    "Newsroom": ("News_Media", "Media", "Text_Analysis", "Translation"),
    "Careers": ("Jobs", "Education", "Business"),
    "Smart Energy": ("Energy", "Devices", "Weather"),
    "AI Studio": ("Artificial_Intelligence_Machine_Learning", "Visual_Recognition", "Text_Analysis", "Data"),
}

KIND_SETS = (
    ("search", "get", "list", "children", "top"),
    ("search", "get", "top", "stats"),
    ("search", "get", "list", "stats", "children"),
    ("search", "get", "children", "top", "stats", "list"),
)


def _group_apis(group: str, tool_number: int) -> list[Api]:
    style = tool_number % 3
    if group in SERVICES:
        return SERVICES[group](style)
    return domain_apis(group, KIND_SETS[tool_number % len(KIND_SETS)], style)


def _describe(name: str, category: str, apis: list[Api]) -> str:
    what = "; ".join(api.description.rstrip(".").lower() for api in apis[:3])
    return f"{name} ({category.replace('_', ' ')}): {what}."


@dataclass
class Hub:
    tools: list[Tool]

    def __post_init__(self) -> None:
        self.by_name = {tool.standard_name: tool for tool in self.tools}
        self.functions = {tool.function(api): (tool, api) for tool in self.tools for api in tool.apis}

    def tool(self, name: str) -> Tool | None:
        """A tool by its name or its standardized name (``world_data_hub``)."""
        return self.by_name.get(standardize(name))

    def api_count(self) -> int:
        return sum(len(tool.apis) for tool in self.tools)

    def categories(self) -> list[str]:
        return list(CATEGORIES)


@cache
def hub() -> Hub:
    """Every tool of the hub (built once per process)."""
    tools: list[Tool] = []
    for category, (groups, names) in CATEGORIES.items():
        for number, name in enumerate(names):
            main = groups[number % len(groups)]
            apis = _group_apis(main, number)
            if len(groups) > 1:
                extra = _group_apis(groups[(number + 1) % len(groups)], number)
                apis += [api for api in extra[:2] if api.name not in {a.name for a in apis}]
            host = standardize(name).replace("_", "-") + ".p.rapidapi.com"
            collections = tuple(c for c, spans in COLLECTIONS.items() if category in spans and number < 2)
            tools.append(Tool(name, category, _describe(name, category, apis), host, apis, collections))
    return Hub(tools)


# ---------------------------------------------------------------------- ToolBench's tool JSON
def _skeleton(value: Any, depth: int = 0) -> Any:
    """A response as ToolBench's ``template_response`` type skeleton (``"str"``, ``{"_list_length": n}``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str) or value is None:
        return "str" if value is not None else "NoneType"
    if isinstance(value, dict):
        return {str(k): _skeleton(v, depth + 1) for k, v in value.items()}
    if not value:
        return []
    first = _skeleton(value[0], depth + 1)
    if isinstance(first, dict):
        return [{**first, "_list_length": len(value)}]
    return [f"list of {first} with length {len(value)}"]


def example_arguments(api: Api) -> dict[str, Any]:
    return {param.name: param.default for param in api.required if param.default != ""}


def tool_json(tool: Tool) -> dict[str, Any]:
    """The tool as ToolBench's tool JSON."""
    api_list = []
    for api in tool.apis:
        status, body = call(tool, api, example_arguments(api), {})
        api_list.append(
            {
                "name": api.name,
                "url": f"https://{tool.host}{api.path}",
                "description": api.description,
                "method": api.method,
                "required_parameters": [param.record() for param in api.required],
                "optional_parameters": [param.record() for param in api.optional],
                "template_response": _skeleton(body) if status == 200 else {"message": "str"},
            }
        )
    return {
        "tool_name": tool.name,
        "standardized_name": tool.standard_name,
        "title": tool.name,
        "tool_description": tool.description,
        "host": tool.host,
        "category": tool.category,
        "collections": list(tool.collections),
        "api_list": api_list,
    }


def api_record(tool: Tool, api: Api) -> dict[str, Any]:
    """An ``api_list`` entry of a query record (ToolBench's G*_query.json shape)."""
    entry = next(e for e in tool_json_cached(tool.standard_name)["api_list"] if e["name"] == api.name)
    return {
        "category_name": tool.category,
        "tool_name": tool.name,
        "api_name": api.name,
        "api_description": api.description,
        "required_parameters": entry["required_parameters"],
        "optional_parameters": entry["optional_parameters"],
        "method": api.method,
        "template_response": entry["template_response"],
    }


@cache
def tool_json_cached(standard_name: str) -> dict[str, Any]:
    tool = hub().by_name[standard_name]
    return tool_json(tool)


# ---------------------------------------------------------------------- questions a tool answers
def askers(tool: Tool) -> dict[str, Any]:
    """The questions this tool's APIs can answer: ``{api key: asker(r, world) -> Question}``."""
    names = {api.key: api.name for api in tool.apis}
    found: dict[str, Any] = {}
    for api in tool.apis:
        table, _, kind = api.key.partition(".")
        if table in DOMAINS and kind in ASKERS:
            needed = {"get": ("search", "get")}.get(kind, (kind,))
            if all(f"{table}.{k}" in names for k in needed):
                found[api.key] = lambda r, w, a=ASKERS[kind], t=table: a(r, w, t, names)
        elif api.key in ASKS:
            asker = ASKS[api.key]
            found[api.key] = lambda r, w, a=asker: a(r, w, names)
    # A chained question names every API it calls: keep it only when the tool has them all.
    return {key: asker for key, asker in found.items() if _complete(asker, names)}


def _complete(asker: Any, names: dict[str, str]) -> bool:
    try:
        question: Question = asker(random.Random(0), build_world())
    except KeyError:
        return False
    return all(name in names.values() for name, _ in question.calls)


__all__ = ["CATEGORIES", "COLLECTIONS", "Hub", "api_record", "askers", "function_name", "hub", "tool_json"]

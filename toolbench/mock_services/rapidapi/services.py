"""The hub's special-purpose APIs: weather, money, markets, places, sports tables, text, codes,
security checks, messaging, storage, payments, points, carts, links, calculators, energy,
shipping, flights and images.

Each service is a function of a naming style (0, 1 or 2) that returns its APIs, so two tools that
offer the same service still name their APIs differently. Every handler computes its answer from
its arguments, the world and the session's state; the POST APIs write to the state (files,
messages, payments, points, carts, short links), and their GET partners read it back. The
questions each API can answer are in ``questions.py``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

from toolbench.core.geo import distance_km
from toolbench.mock_services.rapidapi.domains import DOMAINS, search_rows
from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context, Param
from toolbench.mock_services.rapidapi.world import (
    FORECAST_DAYS,
    HISTORY_DAYS,
    TODAY,
    World,
    convert,
    stock_price,
    weather,
)

S = "STRING"
N = "NUMBER"


def p(name: str, kind: str, description: str, default: Any = "", choices: tuple[str, ...] = ()) -> Param:
    return Param(name, kind, description, default, choices)


def api(
    key: str,
    names: tuple[str, str, str],
    style: int,
    method: str,
    path: str,
    description: str,
    handler: Callable[[Context, dict[str, Any]], Any],
    required: tuple[Param, ...] = (),
    optional: tuple[Param, ...] = (),
) -> Api:
    prefix = ("", "/v1", "/api")[style % 3]
    return Api(names[style % 3], method, prefix + path, description, handler, required, optional, key)


# ---------------------------------------------------------------------- lookups shared by handlers
def city_named(world: World, name: str) -> dict[str, Any]:
    """A city by name (case-insensitive, ", Country" allowed after it), or a 404."""
    wanted = name.split(",")[0].strip().lower()
    for city in world.rows("cities"):
        if city["name"].lower() == wanted:
            return city
    raise ApiError(404, f"City '{name[:80]}' not found")


def row(world: World, table: str, key: Any, what: str) -> dict[str, Any]:
    found = world.get(
        table, str(key).strip().upper() if table in ("stocks", "currencies", "countries", "airports", "coins") else key
    )
    if found is None:
        raise ApiError(404, f"Unknown {what} '{str(key)[:80]}'")
    return found


def _bounded(value: float, low: float, high: float, name: str) -> float:
    if not low <= value <= high:
        raise ApiError(400, f"Invalid value for parameter '{name}': must be between {low:g} and {high:g}")
    return value


def _day_offset(text: str, low: int, high: int, name: str = "date") -> int:
    offset = (date.fromisoformat(text) - TODAY).days
    if not low <= offset <= high:
        first, last = TODAY.toordinal() + low, TODAY.toordinal() + high
        raise ApiError(400, f"'{name}' must be between {date.fromordinal(first)} and {date.fromordinal(last)}")
    return offset


# ---------------------------------------------------------------------- weather
def weather_service(style: int) -> list[Api]:
    def current(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        return {
            "location": {"name": city["name"], "country": city["country"], "lat": city["lat"], "lon": city["lon"]},
            "current": weather(city, 0),
        }

    def forecast(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        days = int(_bounded(a.get("days", 3), 1, FORECAST_DAYS, "days"))
        return {
            "location": {"name": city["name"], "country": city["country"]},
            "forecast": [weather(city, n) for n in range(days)],
        }

    def history(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        offset = _day_offset(a["date"], -HISTORY_DAYS, -1)
        return {"location": {"name": city["name"]}, "day": weather(city, offset)}

    def by_coordinates(ctx: Context, a: dict[str, Any]) -> Any:
        lat, lon = _bounded(a["lat"], -90, 90, "lat"), _bounded(a["lon"], -180, 180, "lon")
        city = min(ctx.world.rows("cities"), key=lambda c: distance_km(lat, lon, c["lat"], c["lon"]))
        if distance_km(lat, lon, city["lat"], city["lon"]) > 150:
            raise ApiError(404, "No weather station within 150 km of these coordinates")
        return {"station": city["name"], "current": weather(city, 0)}

    city = p("city", S, "city name, such as London", "London")
    return [
        api(
            "weather.current",
            ("Current Weather", "getCurrentWeather", "current"),
            style,
            "GET",
            "/current",
            "The weather now in a city.",
            current,
            (city,),
        ),
        api(
            "weather.forecast",
            ("Daily Forecast", "getForecast", "forecast"),
            style,
            "GET",
            "/forecast",
            "Daily forecast for up to 7 days from today.",
            forecast,
            (city,),
            (p("days", N, "1 to 7", 3),),
        ),
        api(
            "weather.history",
            ("Historical Weather", "getHistory", "history"),
            style,
            "GET",
            "/history",
            "The weather of one of the last 30 days.",
            history,
            (city, p("date", "DATE", "YYYY-MM-DD", "2026-02-20")),
        ),
        api(
            "weather.coords",
            ("Weather By Coordinates", "getWeatherByLatLon", "point"),
            style,
            "GET",
            "/point",
            "The weather now at the station nearest a point.",
            by_coordinates,
            (p("lat", N, "latitude", 51.5), p("lon", N, "longitude", -0.13)),
        ),
    ]


# ---------------------------------------------------------------------- money and markets
def currency_service(style: int) -> list[Api]:
    def convert_(ctx: Context, a: dict[str, Any]) -> Any:
        source = row(ctx.world, "currencies", a["from"], "currency")["id"]
        target = row(ctx.world, "currencies", a["to"], "currency")["id"]
        amount = _bounded(a["amount"], 0, 1e12, "amount")
        result = convert(ctx.world, amount, source, target)
        return {
            "from": source,
            "to": target,
            "amount": amount,
            "rate": round(result / amount, 6) if amount else None,
            "result": round(result, 2),
            "date": TODAY.isoformat(),
        }

    def latest(ctx: Context, a: dict[str, Any]) -> Any:
        base = row(ctx.world, "currencies", a.get("base", "USD"), "currency")["id"]
        rates = {c["id"]: round(convert(ctx.world, 1, base, c["id"]), 6) for c in ctx.world.rows("currencies")}
        return {"base": base, "date": TODAY.isoformat(), "rates": rates}

    def info(ctx: Context, a: dict[str, Any]) -> Any:
        currency = row(ctx.world, "currencies", a["code"], "currency")
        users = [c["name"] for c in ctx.world.rows("countries") if c["currency"] == currency["id"]]
        return {"code": currency["id"], "name": currency["name"], "symbol": currency["symbol"], "countries": users}

    return [
        api(
            "currency.convert",
            ("Convert", "convertCurrency", "exchange"),
            style,
            "GET",
            "/convert",
            "Converts an amount between two currencies at today's rate.",
            convert_,
            (p("from", S, "ISO code", "USD"), p("to", S, "ISO code", "EUR"), p("amount", N, "amount", 100)),
        ),
        api(
            "currency.latest",
            ("Latest Rates", "getLatestRates", "rates"),
            style,
            "GET",
            "/latest",
            "Today's rates against a base currency.",
            latest,
            (),
            (p("base", S, "ISO code", "USD"),),
        ),
        api(
            "currency.info",
            ("Currency Details", "getCurrency", "currency"),
            style,
            "GET",
            "/currency",
            "A currency's name, symbol and the countries that use it.",
            info,
            (p("code", S, "ISO code", "EUR"),),
        ),
    ]


def stocks_service(style: int) -> list[Api]:
    def quote(ctx: Context, a: dict[str, Any]) -> Any:
        stock = row(ctx.world, "stocks", a["symbol"], "symbol")
        today, before = stock_price(stock, 0), stock_price(stock, -1)
        change = round(today["close"] - before["close"], 2)
        return {
            "symbol": stock["id"],
            "name": stock["name"],
            "exchange": stock["exchange"],
            "price": today["close"],
            "change": change,
            "change_percent": round(change / before["close"] * 100, 2),
            "volume": today["volume"],
            "market_cap": int(today["close"] * stock["shares_outstanding"]),
        }

    def history(ctx: Context, a: dict[str, Any]) -> Any:
        stock = row(ctx.world, "stocks", a["symbol"], "symbol")
        days = int(_bounded(a.get("days", 5), 1, HISTORY_DAYS, "days"))
        return {"symbol": stock["id"], "prices": [stock_price(stock, -n) for n in range(days)]}

    def profile(ctx: Context, a: dict[str, Any]) -> Any:
        stock = row(ctx.world, "stocks", a["symbol"], "symbol")
        company = ctx.world.get("companies", stock["company_id"])
        return {"symbol": stock["id"], "sector": stock["sector"], "exchange": stock["exchange"], **(company or {})}

    def lookup(ctx: Context, a: dict[str, Any]) -> Any:
        found = search_rows(ctx.world, DOMAINS["companies"], a["keywords"])
        return {"matches": [{"symbol": c["ticker"], "name": c["name"]} for c in found[:10]]}

    symbol = p("symbol", S, "ticker symbol", "KIEY")
    return [
        api(
            "stocks.quote",
            ("Stock Quote", "getQuote", "quote"),
            style,
            "GET",
            "/quote",
            "Today's closing price, change and volume of a stock.",
            quote,
            (symbol,),
        ),
        api(
            "stocks.history",
            ("Price History", "getTimeSeries", "daily"),
            style,
            "GET",
            "/time-series",
            "Daily open, high, low, close and volume, newest first.",
            history,
            (symbol,),
            (p("days", N, "1 to 30", 5),),
        ),
        api(
            "stocks.profile",
            ("Company Profile", "getProfile", "profile"),
            style,
            "GET",
            "/profile",
            "The company behind a ticker.",
            profile,
            (symbol,),
        ),
        api(
            "stocks.lookup",
            ("Symbol Lookup", "searchSymbol", "lookup"),
            style,
            "GET",
            "/lookup",
            "Ticker symbols of companies whose name matches.",
            lookup,
            (p("keywords", S, "company name words", "Nova"),),
        ),
    ]


def coins_service(style: int) -> list[Api]:
    def price(ctx: Context, a: dict[str, Any]) -> Any:
        coin = row(ctx.world, "coins", a["symbol"], "coin")
        currency = row(ctx.world, "currencies", a.get("currency", "USD"), "currency")["id"]
        return {
            "symbol": coin["id"],
            "currency": currency,
            "price": round(convert(ctx.world, coin["price_usd"], "USD", currency), 4),
        }

    def market(ctx: Context, a: dict[str, Any]) -> Any:
        coins = sorted(ctx.world.rows("coins"), key=lambda c: -c["price_usd"] * c["supply"])
        return {
            "coins": [
                {"symbol": c["id"], "name": c["name"], "market_cap_usd": int(c["price_usd"] * c["supply"])}
                for c in coins
            ]
        }

    return [
        api(
            "coins.price",
            ("Coin Price", "getCoinPrice", "price"),
            style,
            "GET",
            "/price",
            "A coin's price.",
            price,
            (p("symbol", S, "coin symbol", "ASTX"),),
            (p("currency", S, "ISO code", "USD"),),
        ),
        api(
            "coins.market",
            ("Market Overview", "getMarkets", "markets"),
            style,
            "GET",
            "/markets",
            "All coins by market capitalization.",
            market,
        ),
    ]


# ---------------------------------------------------------------------- places
def geo_service(style: int) -> list[Api]:
    def geocode(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["address"])
        return {
            "city": city["name"],
            "city_id": city["id"],
            "country": city["country"],
            "lat": city["lat"],
            "lon": city["lon"],
        }

    def reverse(ctx: Context, a: dict[str, Any]) -> Any:
        lat, lon = _bounded(a["lat"], -90, 90, "lat"), _bounded(a["lon"], -180, 180, "lon")
        city = min(ctx.world.rows("cities"), key=lambda c: distance_km(lat, lon, c["lat"], c["lon"]))
        return {
            "nearest_city": city["name"],
            "city_id": city["id"],
            "country": city["country"],
            "distance_km": round(distance_km(lat, lon, city["lat"], city["lon"]), 1),
        }

    def distance(ctx: Context, a: dict[str, Any]) -> Any:
        one, two = city_named(ctx.world, a["from_city"]), city_named(ctx.world, a["to_city"])
        km = distance_km(one["lat"], one["lon"], two["lat"], two["lon"])
        return {
            "from": one["name"],
            "to": two["name"],
            "distance_km": round(km, 1),
            "distance_miles": round(km / 1.609344, 1),
        }

    def nearby(ctx: Context, a: dict[str, Any]) -> Any:
        lat, lon = _bounded(a["lat"], -90, 90, "lat"), _bounded(a["lon"], -180, 180, "lon")
        radius = _bounded(a.get("radius_km", 500), 1, 5000, "radius_km")
        found = sorted(
            (round(distance_km(lat, lon, c["lat"], c["lon"]), 1), c["name"], c["id"]) for c in ctx.world.rows("cities")
        )
        return {"cities": [{"name": n, "id": i, "distance_km": d} for d, n, i in found if d <= radius][:20]}

    def timezone(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        offset = city["utc_offset"]
        minutes = int(12 * 60 + offset * 60) % (24 * 60)  # the hub's clock: 12:00 UTC today
        sign = "+" if offset >= 0 else "-"
        hours, rest = divmod(abs(offset) * 60, 60)
        return {
            "city": city["name"],
            "utc_offset": f"{sign}{int(hours):02d}:{int(rest):02d}",
            "local_time": f"{TODAY.isoformat()} {minutes // 60:02d}:{minutes % 60:02d}",
        }

    return [
        api(
            "geo.geocode",
            ("Geocode City", "geocodeAddress", "place lookup"),  # no name ends another's (ToolBench routes by suffix)
            style,
            "GET",
            "/geocode",
            "Coordinates of a city.",
            geocode,
            (p("address", S, "city name", "Paris"),),
        ),
        api(
            "geo.reverse",
            ("Reverse Geocode", "reverseGeocode", "reverse"),
            style,
            "GET",
            "/reverse",
            "The nearest city to a point.",
            reverse,
            (p("lat", N, "latitude", 48.86), p("lon", N, "longitude", 2.35)),
        ),
        api(
            "geo.distance",
            ("City Distance", "getDistance", "distance"),
            style,
            "GET",
            "/distance",
            "Great-circle distance between two cities.",
            distance,
            (p("from_city", S, "city name", "Paris"), p("to_city", S, "city name", "Berlin")),
        ),
        api(
            "geo.nearby",
            ("Cities Near Point", "getNearbyCities", "nearby"),
            style,
            "GET",
            "/nearby",
            "Cities within a radius of a point, nearest first.",
            nearby,
            (p("lat", N, "latitude", 48.86), p("lon", N, "longitude", 2.35)),
            (p("radius_km", N, "1 to 5000", 500),),
        ),
        api(
            "geo.timezone",
            ("City Time Zone", "getTimezone", "timezone"),
            style,
            "GET",
            "/timezone",
            "A city's UTC offset and local time.",
            timezone,
            (p("city", S, "city name", "Tokyo"),),
        ),
    ]


# ---------------------------------------------------------------------- sports tables
def standings_table(world: World, league_id: str) -> list[dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for team in world.rows("teams"):
        if team["league_id"] == league_id:
            table[team["id"]] = {
                "team_id": team["id"],
                "team": team["name"],
                "played": 0,
                "won": 0,
                "drawn": 0,
                "lost": 0,
                "scored": 0,
                "conceded": 0,
                "points": 0,
            }
    for match in world.rows("matches"):
        if match["league_id"] != league_id:
            continue
        for side, other in (("home", "away"), ("away", "home")):
            entry = table[match[f"{side}_team_id"]]
            mine, theirs = match[f"{side}_score"], match[f"{other}_score"]
            entry["played"] += 1
            entry["scored"] += mine
            entry["conceded"] += theirs
            outcome = "won" if mine > theirs else "lost" if mine < theirs else "drawn"
            entry[outcome] += 1
            entry["points"] += {"won": 3, "drawn": 1, "lost": 0}[outcome]
    ranked = sorted(
        table.values(), key=lambda e: (-e["points"], -(e["scored"] - e["conceded"]), -e["scored"], e["team"])
    )
    return [{"position": n, **entry} for n, entry in enumerate(ranked, start=1)]


def sports_service(style: int) -> list[Api]:
    def standings(ctx: Context, a: dict[str, Any]) -> Any:
        league = row(ctx.world, "leagues", a["league_id"].upper(), "league")
        return {
            "league": league["name"],
            "season": league["season"],
            "standings": standings_table(ctx.world, league["id"]),
        }

    def fixtures(ctx: Context, a: dict[str, Any]) -> Any:
        _day_offset(a["date"], -400, 400)
        return {"date": a["date"], "matches": [m for m in ctx.world.rows("matches") if m["date"] == a["date"]]}

    def team_matches(ctx: Context, a: dict[str, Any]) -> Any:
        team = row(ctx.world, "teams", a["team_id"], "team")
        games = [m for m in ctx.world.rows("matches") if team["id"] in (m["home_team_id"], m["away_team_id"])]
        return {"team": team["name"], "matches": games}

    def match(ctx: Context, a: dict[str, Any]) -> Any:
        game = row(ctx.world, "matches", a["match_id"], "match")
        home, away = ctx.world.get("teams", game["home_team_id"]), ctx.world.get("teams", game["away_team_id"])
        return {**game, "home_team": home["name"] if home else None, "away_team": away["name"] if away else None}

    return [
        api(
            "sports.standings",
            ("League Standings", "getStandings", "table"),
            style,
            "GET",
            "/standings",
            "The league table from every match played.",
            standings,
            (p("league_id", S, "league id", "L1"),),
        ),
        api(
            "sports.fixtures",
            ("Matches By Date", "getFixturesByDate", "fixtures"),
            style,
            "GET",
            "/fixtures",
            "Every match played on a date.",
            fixtures,
            (p("date", "DATE", "YYYY-MM-DD", "2026-01-12"),),
        ),
        api(
            "sports.team_matches",
            ("Team Matches", "getTeamFixtures", "team fixtures"),
            style,
            "GET",
            "/team-matches",
            "Every match of a team this season.",
            team_matches,
            (p("team_id", S, "team id", "201"),),
        ),
        api(
            "sports.match",
            ("Match Details", "getMatch", "match"),
            style,
            "GET",
            "/match",
            "One match with its teams' names.",
            match,
            (p("match_id", S, "match id", "90001"),),
        ),
    ]


# ---------------------------------------------------------------------- text and language
POSITIVE = frozenset(
    [
        "good",
        "great",
        "excellent",
        "happy",
        "love",
        "wonderful",
        "amazing",
        "best",
        "fantastic",
        "nice",
        "pleased",
        "glad",
        "enjoy",
    ]
)
NEGATIVE = frozenset(
    [
        "bad",
        "terrible",
        "awful",
        "sad",
        "hate",
        "worst",
        "horrible",
        "poor",
        "angry",
        "disappointed",
        "broken",
        "slow",
        "boring",
    ]
)
STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "from",
    ]
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def text_service(style: int) -> list[Api]:
    def count(ctx: Context, a: dict[str, Any]) -> Any:
        text = a["text"]
        sentences = [s for s in re.split(r"[.!?]+", text) if s.strip()]
        return {"words": len(text.split()), "characters": len(text), "sentences": len(sentences)}

    def sentiment(ctx: Context, a: dict[str, Any]) -> Any:
        found = words_of(a["text"])
        score = sum(w in POSITIVE for w in found) - sum(w in NEGATIVE for w in found)
        label = "positive" if score > 0 else "negative" if score < 0 else "neutral"
        return {"score": score, "label": label, "words": len(found)}

    def keywords(ctx: Context, a: dict[str, Any]) -> Any:
        top = int(_bounded(a.get("top", 3), 1, 20, "top"))
        counts = Counter(w for w in words_of(a["text"]) if w not in STOPWORDS and len(w) > 2)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return {"keywords": [{"word": w, "count": c} for w, c in ranked]}

    def language(ctx: Context, a: dict[str, Any]) -> Any:
        found = set(words_of(a["text"]))
        votes = {
            lang: sum(str(w[lang]).lower() in found for w in ctx.world.rows("words")) for lang in ("es", "fr", "de")
        }
        votes["en"] = sum(w["word"] in found for w in ctx.world.rows("words")) + len(found & STOPWORDS)
        best = max(sorted(votes), key=lambda lang: votes[lang])
        total = sum(votes.values())
        return {"language": best if total else "unknown", "confidence": round(votes[best] / total, 2) if total else 0.0}

    text = p("text", S, "the text", "What a wonderful day in the park.")
    return [
        api(
            "text.count",
            ("Word Count", "countWords", "count"),
            style,
            "POST",
            "/count",
            "Words, characters and sentences of a text.",
            count,
            (text,),
        ),
        api(
            "text.sentiment",
            ("Sentiment Analysis", "analyzeSentiment", "sentiment"),
            style,
            "POST",
            "/sentiment",
            "Whether a text reads positive, negative or neutral.",
            sentiment,
            (text,),
        ),
        api(
            "text.keywords",
            ("Extract Keywords", "getKeywords", "keywords"),
            style,
            "POST",
            "/keywords",
            "The most frequent content words of a text.",
            keywords,
            (text,),
            (p("top", N, "how many", 3),),
        ),
        api(
            "text.language",
            ("Detect Language", "detectLanguage", "detect"),
            style,
            "POST",
            "/detect",
            "The language of a text (en, es, fr or de).",
            language,
            (text,),
        ),
    ]


def dictionary_service(style: int) -> list[Api]:
    def entry(ctx: Context, word: str) -> dict[str, Any]:
        found = ctx.world.get("words", word.strip().lower())
        if found is None:
            raise ApiError(404, f"No entry for '{word[:80]}'")
        return found

    def translate(ctx: Context, a: dict[str, Any]) -> Any:
        found = entry(ctx, a["word"])
        return {"word": found["word"], "target": a["target"], "translation": found[a["target"]]}

    def synonyms(ctx: Context, a: dict[str, Any]) -> Any:
        found = entry(ctx, a["word"])
        return {"word": found["word"], "synonyms": found["synonyms"]}

    def define(ctx: Context, a: dict[str, Any]) -> Any:
        found = entry(ctx, a["word"])
        return {"word": found["word"], "part_of_speech": found["part_of_speech"], "definition": found["meaning"]}

    word = p("word", S, "an English word", "house")
    return [
        api(
            "dictionary.translate",
            ("Translate Word", "translateWord", "translate"),
            style,
            "GET",
            "/translate",
            "An English word in Spanish, French or German.",
            translate,
            (word, p("target", "ENUM", "es, fr or de", "es", ("es", "fr", "de"))),
        ),
        api(
            "dictionary.synonyms",
            ("Synonyms", "getSynonyms", "synonyms"),
            style,
            "GET",
            "/synonyms",
            "Words that mean the same.",
            synonyms,
            (word,),
        ),
        api(
            "dictionary.define",
            ("Define Word", "getDefinition", "define"),
            style,
            "GET",
            "/define",
            "A word's meaning and part of speech.",
            define,
            (word,),
        ),
    ]


# ---------------------------------------------------------------------- codes and security
def codes_service(style: int) -> list[Api]:
    def digest(ctx: Context, a: dict[str, Any]) -> Any:
        algorithm = a.get("algorithm", "sha256")
        return {"algorithm": algorithm, "hash": hashlib.new(algorithm, a["text"].encode()).hexdigest()}

    def encode(ctx: Context, a: dict[str, Any]) -> Any:
        return {"encoded": base64.b64encode(a["text"].encode()).decode()}

    def decode(ctx: Context, a: dict[str, Any]) -> Any:
        try:
            return {"decoded": base64.b64decode(a["data"], validate=True).decode()}
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise ApiError(400, "Invalid value for parameter 'data': not base64 of UTF-8 text") from None

    def rot13(ctx: Context, a: dict[str, Any]) -> Any:
        return {"result": codecs.encode(a["text"], "rot13")}

    return [
        api(
            "codes.hash",
            ("Hash Text", "hashText", "hash"),
            style,
            "POST",
            "/hash",
            "A hash of a text.",
            digest,
            (p("text", S, "the text", "hello"),),
            (p("algorithm", "ENUM", "md5, sha1 or sha256", "sha256", ("md5", "sha1", "sha256")),),
        ),
        api(
            "codes.encode",
            ("Base64 Encode", "base64Encode", "encode"),
            style,
            "POST",
            "/encode",
            "Base64 of a text's UTF-8 bytes.",
            encode,
            (p("text", S, "the text", "hello"),),
        ),
        api(
            "codes.decode",
            ("Base64 Decode", "base64Decode", "decode"),
            style,
            "POST",
            "/decode",
            "The text of base64 data.",
            decode,
            (p("data", S, "base64", "aGVsbG8="),),
        ),
        api(
            "codes.rot13",
            ("ROT13", "rot13Text", "rot13"),
            style,
            "POST",
            "/rot13",
            "A text in ROT13.",
            rot13,
            (p("text", S, "the text", "hello"),),
        ),
    ]


def security_service(style: int) -> list[Api]:
    def domain_row(ctx: Context, name: str) -> dict[str, Any]:
        found = ctx.world.get(
            "domains", name.strip().lower().removeprefix("https://").removeprefix("http://").strip("/")
        )
        if found is None:
            raise ApiError(404, f"Domain '{name[:80]}' is not registered")
        return found

    def status(ctx: Context, a: dict[str, Any]) -> Any:
        found = domain_row(ctx, a["domain"])
        return {
            "domain": found["id"],
            "status": found["status"],
            "response_ms": found["response_ms"],
            "ip": found["ip"],
        }

    def ssl(ctx: Context, a: dict[str, Any]) -> Any:
        found = domain_row(ctx, a["domain"])
        left = (date.fromisoformat(found["ssl_expires"]) - TODAY).days
        return {"domain": found["id"], "expires": found["ssl_expires"], "days_left": left, "valid": left > 0}

    def blacklist(ctx: Context, a: dict[str, Any]) -> Any:
        found = domain_row(ctx, a["domain"])
        return {"domain": found["id"], "blacklisted": found["blacklisted"]}

    def password(ctx: Context, a: dict[str, Any]) -> Any:
        text = a["password"]
        classes = sum(bool(re.search(pattern, text)) for pattern in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
        score = min(4, (len(text) >= 8) + (len(text) >= 12) + max(0, classes - 1))
        return {
            "length": len(text),
            "score": score,
            "strength": ("very weak", "weak", "fair", "strong", "very strong")[score],
        }

    def ip_lookup(ctx: Context, a: dict[str, Any]) -> Any:
        hosted = [d["id"] for d in ctx.world.rows("domains") if d["ip"] == a["ip"].strip()]
        if not hosted:
            raise ApiError(404, f"No records for IP '{a['ip'][:40]}'")
        return {"ip": a["ip"].strip(), "domains": hosted}

    domain = p("domain", S, "domain name", "secretkingdom.com")
    return [
        api(
            "security.status",
            ("Domain Status", "checkStatus", "uptime"),
            style,
            "GET",
            "/status",
            "Whether a site is up, and how fast it answers.",
            status,
            (domain,),
        ),
        api(
            "security.ssl",
            ("SSL Check", "checkCertificate", "ssl"),
            style,
            "GET",
            "/ssl",
            "When a domain's certificate expires.",
            ssl,
            (domain,),
        ),
        api(
            "security.blacklist",
            ("Blacklist Check", "checkBlacklist", "reputation"),
            style,
            "GET",
            "/blacklist",
            "Whether a domain is on a blocklist.",
            blacklist,
            (domain,),
        ),
        api(
            "security.password",
            ("Password Strength", "ratePassword", "password"),
            style,
            "POST",
            "/password",
            "A password's strength from 0 to 4.",
            password,
            (p("password", S, "the password", "hunter2"),),
        ),
        api(
            "security.ip",
            ("IP Lookup", "lookupIp", "ip"),
            style,
            "GET",
            "/ip",
            "Domains hosted at an IP address.",
            ip_lookup,
            (p("ip", S, "IPv4 address", "199.126.190.32"),),
        ),
    ]


# ---------------------------------------------------------------------- services that keep state
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)+[A-Za-z]{2,}")
DISPOSABLE = frozenset(("tempmail.dev", "throwaway.io", "mailnull.net"))


MAX_RECORDS = 1000  # of each kind a session keeps (messages, payments, orders, ...): bounded memory
HISTORY_KEPT = 50  # point changes a user's history shows


def _keep(ctx: Context, box: str, key: str, record: dict[str, Any]) -> None:
    """Store a record the session made, or refuse it (507) when the session holds too many."""
    records = ctx.state.setdefault(box, {})
    if key not in records and len(records) >= MAX_RECORDS:
        raise ApiError(507, f"This session holds {MAX_RECORDS} {box}; no more can be made")
    records[key] = record


def _stored(ctx: Context, box: str, key: str, what: str) -> dict[str, Any]:
    found = ctx.state.get(box, {}).get(str(key).strip())
    if found is None:
        raise ApiError(404, f"No {what} with id '{str(key)[:80]}'")
    return found


def _phone_country(ctx: Context, number: str) -> dict[str, Any] | None:
    digits = "+" + re.sub(r"\D", "", number)
    codes = sorted(ctx.world.rows("countries"), key=lambda c: -len(c["calling_code"]))
    return next((c for c in codes if digits.startswith(c["calling_code"])), None) if 8 <= len(digits) <= 16 else None


def messaging_service(style: int) -> list[Api]:
    def validate_email(ctx: Context, a: dict[str, Any]) -> Any:
        email = a["email"].strip()
        valid = bool(_EMAIL.fullmatch(email))
        domain = email.rsplit("@", 1)[-1].lower() if valid else None
        return {"email": email, "valid": valid, "domain": domain, "disposable": domain in DISPOSABLE}

    def send_email(ctx: Context, a: dict[str, Any]) -> Any:
        if not _EMAIL.fullmatch(a["to"].strip()):
            raise ApiError(400, "Invalid value for parameter 'to': not an email address")
        number = ctx.counter("email")
        message = {"id": f"msg-{number:05d}", "to": a["to"].strip(), "subject": a["subject"], "status": "queued"}
        _keep(ctx, "emails", message["id"], message)
        return message

    def email_status(ctx: Context, a: dict[str, Any]) -> Any:
        message = _stored(ctx, "emails", a["message_id"], "message")
        return {**message, "status": "delivered"}

    def send_sms(ctx: Context, a: dict[str, Any]) -> Any:
        country = _phone_country(ctx, a["to"])
        if country is None:
            raise ApiError(400, "Invalid value for parameter 'to': not a phone number with a country code")
        segments = max(1, math.ceil(len(a["message"]) / 160))
        number = ctx.counter("sms")
        sms = {
            "id": f"SM{number:06d}",
            "to": a["to"],
            "country": country["id"],
            "segments": segments,
            "cost_usd": round(0.0075 * segments, 4),
            "status": "sent",
        }
        _keep(ctx, "sms", sms["id"], sms)
        return sms

    def sms_status(ctx: Context, a: dict[str, Any]) -> Any:
        return {**_stored(ctx, "sms", a["sms_id"], "message"), "status": "delivered"}

    def validate_phone(ctx: Context, a: dict[str, Any]) -> Any:
        country = _phone_country(ctx, a["number"])
        return {"number": a["number"], "valid": country is not None, "country": country["name"] if country else None}

    return [
        api(
            "messaging.validate_email",
            ("Validate Email", "verifyEmail", "email check"),
            style,
            "GET",
            "/email/verify",
            "Whether an address is well formed and not disposable.",
            validate_email,
            (p("email", S, "the address", "ada@example.com"),),
        ),
        api(
            "messaging.send_email",
            ("Send Email", "sendEmail", "email send"),
            style,
            "POST",
            "/email/send",
            "Queues an email; returns its id.",
            send_email,
            (p("to", S, "recipient", "ada@example.com"), p("subject", S, "subject", "Hello")),
            (p("body", S, "text", ""),),
        ),
        api(
            "messaging.email_status",
            ("Email Status", "getEmailStatus", "email status"),
            style,
            "GET",
            "/email/status",
            "Delivery status of a sent email.",
            email_status,
            (p("message_id", S, "id from Send Email", "msg-00001"),),
        ),
        api(
            "messaging.send_sms",
            ("Send SMS", "sendSms", "sms send"),
            style,
            "POST",
            "/sms/send",
            "Sends a text message; returns its id, segments and cost.",
            send_sms,
            (p("to", S, "phone number with country code", "+441234567890"), p("message", S, "text", "Hi")),
        ),
        api(
            "messaging.sms_status",
            ("SMS Status", "getSmsStatus", "sms status"),
            style,
            "GET",
            "/sms/status",
            "Delivery status of a sent SMS.",
            sms_status,
            (p("sms_id", S, "id from Send SMS", "SM000001"),),
        ),
        api(
            "messaging.validate_phone",
            ("Validate Phone", "verifyPhone", "phone check"),
            style,
            "GET",
            "/phone/verify",
            "Whether a phone number is valid, and its country.",
            validate_phone,
            (p("number", S, "phone number", "+33612345678"),),
        ),
    ]


def storage_service(style: int) -> list[Api]:
    def upload(ctx: Context, a: dict[str, Any]) -> Any:
        files = ctx.state.setdefault("files", {})
        if len(files) >= 100:
            raise ApiError(507, "Storage quota of 100 files reached")
        number = ctx.counter("file")
        entry = {
            "id": f"file_{number:04d}",
            "name": a["name"],
            "size": len(a["content"].encode()),
            "sha256": hashlib.sha256(a["content"].encode()).hexdigest(),
            "content": a["content"],
        }
        files[entry["id"]] = entry
        return {k: v for k, v in entry.items() if k != "content"}

    def fetch(ctx: Context, a: dict[str, Any]) -> Any:
        return _stored(ctx, "files", a["file_id"], "file")

    def listing(ctx: Context, a: dict[str, Any]) -> Any:
        files = ctx.state.get("files", {})
        return {
            "count": len(files),
            "files": [{"id": f["id"], "name": f["name"], "size": f["size"]} for f in files.values()],
        }

    def delete(ctx: Context, a: dict[str, Any]) -> Any:
        entry = _stored(ctx, "files", a["file_id"], "file")
        del ctx.state["files"][entry["id"]]
        return {"deleted": entry["id"]}

    file_id = p("file_id", S, "id from the upload", "file_0001")
    return [
        api(
            "storage.upload",
            ("Upload File", "uploadFile", "upload"),
            style,
            "POST",
            "/files",
            "Stores a text file.",
            upload,
            (p("name", S, "file name", "notes.txt"), p("content", S, "file content", "hello")),
        ),
        api(
            "storage.get",
            ("Download File", "getFile", "file"),
            style,
            "GET",
            "/files/{file_id}",
            "A stored file with its content.",
            fetch,
            (file_id,),
        ),
        api("storage.list", ("List Files", "listFiles", "files"), style, "GET", "/files", "The stored files.", listing),
        api(
            "storage.delete",
            ("Delete File", "deleteFile", "remove"),
            style,
            "DELETE",
            "/files/{file_id}",
            "Deletes a stored file.",
            delete,
            (file_id,),
        ),
    ]


def payments_service(style: int) -> list[Api]:
    def create(ctx: Context, a: dict[str, Any]) -> Any:
        amount = _bounded(a["amount"], 0.5, 1e6, "amount")
        currency = row(ctx.world, "currencies", a.get("currency", "USD"), "currency")["id"]
        payment = {
            "id": f"pay_{ctx.counter('payment'):05d}",
            "amount": amount,
            "currency": currency,
            "description": a.get("description", ""),
            "status": "succeeded",
            "refunded": 0,
        }
        _keep(ctx, "payments", payment["id"], payment)
        return payment

    def get(ctx: Context, a: dict[str, Any]) -> Any:
        return _stored(ctx, "payments", a["payment_id"], "payment")

    def refund(ctx: Context, a: dict[str, Any]) -> Any:
        payment = _stored(ctx, "payments", a["payment_id"], "payment")
        if payment["status"] == "refunded":
            raise ApiError(409, f"Payment {payment['id']} is already refunded")
        payment.update(status="refunded", refunded=payment["amount"])
        return payment

    def listing(ctx: Context, a: dict[str, Any]) -> Any:
        payments = list(ctx.state.get("payments", {}).values())
        return {"count": len(payments), "payments": payments}

    payment_id = p("payment_id", S, "id from Create Payment", "pay_00001")
    return [
        api(
            "payments.create",
            ("Create Payment", "createCharge", "charge"),
            style,
            "POST",
            "/payments",
            "Charges an amount.",
            create,
            (p("amount", N, "amount", 25),),
            (p("currency", S, "ISO code", "USD"), p("description", S, "what it is for", "")),
        ),
        api(
            "payments.get",
            ("Get Payment", "retrievePayment", "payment"),
            style,
            "GET",
            "/payments/{payment_id}",
            "One payment.",
            get,
            (payment_id,),
        ),
        api(
            "payments.refund",
            ("Refund Payment", "refundCharge", "refund"),
            style,
            "POST",
            "/refunds",
            "Refunds a payment in full.",
            refund,
            (payment_id,),
        ),
        api(
            "payments.list",
            ("List Payments", "listCharges", "payments"),
            style,
            "GET",
            "/payments",
            "Every payment of this session.",
            listing,
        ),
    ]


def rewards_service(style: int) -> list[Api]:
    def account(ctx: Context, user: str) -> dict[str, Any]:
        name = user.strip().lower()
        if name not in ctx.state.get("points", {}):
            _keep(ctx, "points", name, {"balance": 0, "history": []})
        return ctx.state["points"][name]

    def add(ctx: Context, a: dict[str, Any]) -> Any:
        points = int(_bounded(a["points"], 1, 1e6, "points"))
        entry = account(ctx, a["user"])
        entry["balance"] += points
        entry["history"].append({"change": points, "reason": a.get("reason", "")})
        del entry["history"][:-HISTORY_KEPT]
        return {"user": a["user"].strip().lower(), "balance": entry["balance"]}

    def balance(ctx: Context, a: dict[str, Any]) -> Any:
        return {"user": a["user"].strip().lower(), "balance": account(ctx, a["user"])["balance"]}

    def redeem(ctx: Context, a: dict[str, Any]) -> Any:
        points = int(_bounded(a["points"], 1, 1e6, "points"))
        entry = account(ctx, a["user"])
        if entry["balance"] < points:
            raise ApiError(402, f"Insufficient points: balance {entry['balance']}, asked {points}")
        entry["balance"] -= points
        entry["history"].append({"change": -points, "reason": "redeemed"})
        del entry["history"][:-HISTORY_KEPT]
        return {"user": a["user"].strip().lower(), "balance": entry["balance"]}

    user = p("user", S, "user name", "ada")
    return [
        api(
            "rewards.add",
            ("Add Points", "creditPoints", "earn"),
            style,
            "POST",
            "/points/add",
            "Adds points.",
            add,
            (user, p("points", N, "how many", 100)),
            (p("reason", S, "why", ""),),
        ),
        api(
            "rewards.balance",
            ("Points Balance", "getBalance", "balance"),
            style,
            "GET",
            "/points",
            "A user's points.",
            balance,
            (user,),
        ),
        api(
            "rewards.redeem",
            ("Redeem Points", "debitPoints", "redeem"),
            style,
            "POST",
            "/points/redeem",
            "Spends points.",
            redeem,
            (user, p("points", N, "how many", 50)),
        ),
    ]


def cart_service(style: int) -> list[Api]:
    def cart(ctx: Context) -> dict[str, Any]:
        return ctx.state.setdefault("cart", {})

    def add(ctx: Context, a: dict[str, Any]) -> Any:
        product = row(ctx.world, "products", a["product_id"], "product")
        if not product["in_stock"]:
            raise ApiError(409, f"Product {product['id']} is out of stock")
        quantity = int(_bounded(a.get("quantity", 1), 1, 99, "quantity"))
        items = cart(ctx)
        items[product["id"]] = items.get(product["id"], 0) + quantity
        return view(ctx, {})

    def view(ctx: Context, a: dict[str, Any]) -> Any:
        lines = []
        for product_id, quantity in cart(ctx).items():
            product = ctx.world.get("products", product_id) or {}
            lines.append(
                {
                    "product_id": product_id,
                    "name": product.get("name"),
                    "quantity": quantity,
                    "subtotal": round(product.get("price_usd", 0) * quantity, 2),
                }
            )
        return {"items": lines, "total_usd": round(sum(line["subtotal"] for line in lines), 2)}

    def checkout(ctx: Context, a: dict[str, Any]) -> Any:
        current = view(ctx, {})
        if not current["items"]:
            raise ApiError(400, "The cart is empty")
        order = {"order_id": f"ORD-{ctx.counter('order'):05d}", **current, "status": "placed"}
        _keep(ctx, "orders", order["order_id"], order)
        ctx.state["cart"] = {}
        return order

    def order(ctx: Context, a: dict[str, Any]) -> Any:
        return _stored(ctx, "orders", a["order_id"], "order")

    return [
        api(
            "cart.add",
            ("Add To Cart", "addCartItem", "cart add"),
            style,
            "POST",
            "/cart/items",
            "Puts a product in the cart.",
            add,
            (p("product_id", S, "product id", "B0000001"),),
            (p("quantity", N, "1 to 99", 1),),
        ),
        api("cart.view", ("View Cart", "getCart", "cart"), style, "GET", "/cart", "The cart and its total.", view),
        api(
            "cart.checkout",
            ("Checkout", "placeOrder", "checkout"),
            style,
            "POST",
            "/orders",
            "Turns the cart into an order.",
            checkout,
        ),
        api(
            "cart.order",
            ("Order Details", "getOrder", "order"),
            style,
            "GET",
            "/orders/{order_id}",
            "One order.",
            order,
            (p("order_id", S, "id from Checkout", "ORD-00001"),),
        ),
    ]


def chat_service(style: int) -> list[Api]:
    def create(ctx: Context, a: dict[str, Any]) -> Any:
        channel = {"id": f"C{ctx.counter('channel'):04d}", "name": a["name"], "messages": []}
        _keep(ctx, "channels", channel["id"], channel)
        return {"id": channel["id"], "name": channel["name"]}

    def post(ctx: Context, a: dict[str, Any]) -> Any:
        channel = _stored(ctx, "channels", a["channel_id"], "channel")
        message = {"ts": len(channel["messages"]) + 1, "text": a["text"]}
        if len(channel["messages"]) >= MAX_RECORDS:
            raise ApiError(507, f"Channel {channel['id']} is full ({MAX_RECORDS} messages)")
        channel["messages"].append(message)
        return {"channel_id": channel["id"], **message}

    def history(ctx: Context, a: dict[str, Any]) -> Any:
        channel = _stored(ctx, "channels", a["channel_id"], "channel")
        return {"channel_id": channel["id"], "count": len(channel["messages"]), "messages": channel["messages"][-20:]}

    channel_id = p("channel_id", S, "id from Create Channel", "C0001")
    return [
        api(
            "chat.create",
            ("Create Channel", "createChannel", "channel new"),
            style,
            "POST",
            "/channels",
            "Opens a channel.",
            create,
            (p("name", S, "channel name", "team"),),
        ),
        api(
            "chat.post",
            ("Post Message", "postMessage", "say"),
            style,
            "POST",
            "/messages",
            "Posts to a channel.",
            post,
            (channel_id, p("text", S, "message", "hello")),
        ),
        api(
            "chat.history",
            ("Channel History", "getMessages", "history"),
            style,
            "GET",
            "/messages",
            "The latest messages of a channel.",
            history,
            (channel_id,),
        ),
    ]


def links_service(style: int) -> list[Api]:
    def shorten(ctx: Context, a: dict[str, Any]) -> Any:
        url = a["url"].strip()
        if not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", url):
            raise ApiError(400, "Invalid value for parameter 'url': not an http(s) URL")
        code = hashlib.sha256(url.encode()).hexdigest()[:7]
        if code not in ctx.state.get("links", {}):
            _keep(ctx, "links", code, {"code": code, "url": url, "clicks": 0})
        return {"code": code, "short_url": f"https://sho.rt/{code}", "url": url}

    def expand(ctx: Context, a: dict[str, Any]) -> Any:
        link = _stored(ctx, "links", a["code"].strip().rsplit("/", 1)[-1], "link")
        link["clicks"] += 1
        return {"code": link["code"], "url": link["url"]}

    def stats(ctx: Context, a: dict[str, Any]) -> Any:
        return dict(_stored(ctx, "links", a["code"].strip().rsplit("/", 1)[-1], "link"))

    code = p("code", S, "the short code", "a1b2c3d")
    return [
        api(
            "links.shorten",
            ("Shorten URL", "createShortLink", "shorten"),
            style,
            "POST",
            "/links",
            "A short link for a URL.",
            shorten,
            (p("url", S, "the long URL", "https://example.com/page"),),
        ),
        api(
            "links.expand",
            ("Expand URL", "resolveLink", "expand"),
            style,
            "GET",
            "/links/{code}",
            "The URL behind a short code (counts a click).",
            expand,
            (code,),
        ),
        api(
            "links.stats",
            ("Link Stats", "getLinkClicks", "clicks"),
            style,
            "GET",
            "/links/{code}/stats",
            "Clicks of a short link.",
            stats,
            (code,),
        ),
    ]


# ---------------------------------------------------------------------- calculators
LENGTH = {"m": 1.0, "km": 1000.0, "cm": 0.01, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}
MASS = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "oz": 0.028349523125}
MET = {"walking": 3.5, "running": 9.8, "cycling": 7.5, "swimming": 6.0, "yoga": 2.5}


def _convert_units(value: float, source: str, target: str) -> float:
    for table in (LENGTH, MASS):
        if source in table and target in table:
            return value * table[source] / table[target]
    temps = {"c": lambda v: v, "f": lambda v: (v - 32) * 5 / 9, "k": lambda v: v - 273.15}
    back = {"c": lambda v: v, "f": lambda v: v * 9 / 5 + 32, "k": lambda v: v + 273.15}
    if source in temps and target in back:
        return back[target](temps[source](value))
    raise ApiError(400, f"Cannot convert '{source[:20]}' to '{target[:20]}'")


def utils_service(style: int) -> list[Api]:
    def between(ctx: Context, a: dict[str, Any]) -> Any:
        days = (date.fromisoformat(a["end"]) - date.fromisoformat(a["start"])).days
        return {"start": a["start"], "end": a["end"], "days": days, "weeks": round(days / 7, 2)}

    def weekday(ctx: Context, a: dict[str, Any]) -> Any:
        return {"date": a["date"], "weekday": date.fromisoformat(a["date"]).strftime("%A")}

    def units(ctx: Context, a: dict[str, Any]) -> Any:
        value = _bounded(a["value"], -1e12, 1e12, "value")
        result = _convert_units(value, a["from"].strip().lower(), a["to"].strip().lower())
        return {"value": value, "from": a["from"], "to": a["to"], "result": round(result, 4)}

    def prime(ctx: Context, a: dict[str, Any]) -> Any:
        number = int(_bounded(a["number"], 0, 10**10, "number"))
        divisor = next((d for d in range(2, math.isqrt(number) + 1) if number % d == 0), None)
        return {"number": number, "is_prime": number > 1 and divisor is None, "smallest_divisor": divisor}

    def slug(ctx: Context, a: dict[str, Any]) -> Any:
        return {"slug": re.sub(r"[^a-z0-9]+", "-", a["text"].lower()).strip("-")}

    return [
        api(
            "utils.between",
            ("Days Between", "daysBetween", "date diff"),
            style,
            "GET",
            "/days-between",
            "Days from one date to another.",
            between,
            (p("start", "DATE", "YYYY-MM-DD", "2026-01-01"), p("end", "DATE", "YYYY-MM-DD", "2026-03-02")),
        ),
        api(
            "utils.weekday",
            ("Day Of Week", "getWeekday", "weekday"),
            style,
            "GET",
            "/weekday",
            "The weekday of a date.",
            weekday,
            (p("date", "DATE", "YYYY-MM-DD", "2026-03-02"),),
        ),
        api(
            "utils.units",
            ("Convert Units", "convertUnits", "units"),
            style,
            "GET",
            "/units",
            "Length (m, km, cm, mi, ft, in), mass (kg, g, lb, oz) or temperature (c, f, k).",
            units,
            (p("value", N, "the value", 10), p("from", S, "unit", "km"), p("to", S, "unit", "mi")),
        ),
        api(
            "utils.prime",
            ("Is Prime", "checkPrime", "prime"),
            style,
            "GET",
            "/prime",
            "Whether a number (up to 10^10) is prime.",
            prime,
            (p("number", N, "the number", 97),),
        ),
        api(
            "utils.slug",
            ("Slugify", "makeSlug", "slug"),
            style,
            "GET",
            "/slug",
            "A URL slug of a text.",
            slug,
            (p("text", S, "the text", "Hello World"),),
        ),
    ]


def health_service(style: int) -> list[Api]:
    def bmi(ctx: Context, a: dict[str, Any]) -> Any:
        weight = _bounded(a["weight_kg"], 2, 500, "weight_kg")
        height = _bounded(a["height_cm"], 40, 260, "height_cm") / 100
        value = round(weight / height**2, 1)
        label = "underweight" if value < 18.5 else "normal" if value < 25 else "overweight" if value < 30 else "obese"
        return {"bmi": value, "category": label}

    def burned(ctx: Context, a: dict[str, Any]) -> Any:
        minutes = _bounded(a["minutes"], 1, 1440, "minutes")
        weight = _bounded(a["weight_kg"], 2, 500, "weight_kg")
        calories = MET[a["activity"]] * 3.5 * weight / 200 * minutes
        return {"activity": a["activity"], "minutes": minutes, "calories": round(calories, 1)}

    def nutrition(ctx: Context, a: dict[str, Any]) -> Any:
        found = search_rows(ctx.world, DOMAINS["foods"], a["food"])
        if not found:
            raise ApiError(404, f"No food matching '{a['food'][:80]}'")
        grams = _bounded(a.get("grams", 100), 1, 5000, "grams")
        food = found[0]
        scale = grams / 100
        return {
            "food": food["name"],
            "grams": grams,
            "calories": round(food["calories"] * scale, 1),
            "protein_g": round(food["protein_g"] * scale, 1),
            "fat_g": round(food["fat_g"] * scale, 1),
            "carbs_g": round(food["carbs_g"] * scale, 1),
        }

    return [
        api(
            "health.bmi",
            ("BMI Calculator", "calculateBmi", "bmi"),
            style,
            "GET",
            "/bmi",
            "Body mass index.",
            bmi,
            (p("weight_kg", N, "weight in kg", 70), p("height_cm", N, "height in cm", 175)),
        ),
        api(
            "health.burned",
            ("Calories Burned", "getCaloriesBurned", "burn"),
            style,
            "GET",
            "/burned",
            "Calories an activity burns.",
            burned,
            (
                p("activity", "ENUM", ", ".join(MET), "running", tuple(MET)),
                p("minutes", N, "minutes", 30),
                p("weight_kg", N, "weight in kg", 70),
            ),
        ),
        api(
            "health.nutrition",
            ("Nutrition Facts", "getNutrition", "nutrition"),
            style,
            "GET",
            "/nutrition",
            "Calories and macronutrients of an amount of a food.",
            nutrition,
            (p("food", S, "food name", "banana"),),
            (p("grams", N, "grams", 100),),
        ),
    ]


def energy_service(style: int) -> list[Api]:
    def price(ctx: Context, a: dict[str, Any]) -> Any:
        country = row(ctx.world, "countries", a["country"], "country")
        cents = 8 + int(hashlib.sha256(country["id"].encode()).digest()[0]) % 30
        return {"country": country["id"], "price_per_kwh_usd": cents / 100, "date": TODAY.isoformat()}

    def carbon(ctx: Context, a: dict[str, Any]) -> Any:
        country = row(ctx.world, "countries", a["country"], "country")
        grams = 50 + int.from_bytes(hashlib.sha256(("co2" + country["id"]).encode()).digest()[:2], "big") % 700
        return {"country": country["id"], "grams_co2_per_kwh": grams}

    def solar(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        kw = _bounded(a["panel_kw"], 0.1, 1000, "panel_kw")
        sun_hours = round(6.5 - abs(city["lat"]) * 0.06, 2)
        return {
            "city": city["name"],
            "panel_kw": kw,
            "sun_hours": sun_hours,
            "kwh_per_day": round(kw * sun_hours * 0.8, 2),
        }

    country = p("country", S, "ISO country code", "DE")
    return [
        api(
            "energy.price",
            ("Electricity Price", "getPowerPrice", "price"),
            style,
            "GET",
            "/price",
            "Today's average electricity price in a country.",
            price,
            (country,),
        ),
        api(
            "energy.carbon",
            ("Carbon Intensity", "getCarbonIntensity", "carbon"),
            style,
            "GET",
            "/carbon",
            "Grams of CO2 per kWh of a country's grid.",
            carbon,
            (country,),
        ),
        api(
            "energy.solar",
            ("Solar Estimate", "estimateSolar", "solar"),
            style,
            "GET",
            "/solar",
            "Daily output of solar panels in a city.",
            solar,
            (p("city", S, "city name", "Madrid"), p("panel_kw", N, "installed kW", 5)),
        ),
    ]


def logistics_service(style: int) -> list[Api]:
    def quote(ctx: Context, a: dict[str, Any]) -> Any:
        one, two = city_named(ctx.world, a["origin"]), city_named(ctx.world, a["destination"])
        weight = _bounded(a["weight_kg"], 0.01, 1000, "weight_kg")
        km = distance_km(one["lat"], one["lon"], two["lat"], two["lon"])
        return {
            "origin": one["name"],
            "destination": two["name"],
            "weight_kg": weight,
            "price_usd": round(5 + weight * 1.2 + km * 0.004, 2),
            "days": 1 + int(km // 1500),
        }

    def track(ctx: Context, a: dict[str, Any]) -> Any:
        parcel = row(ctx.world, "parcels", a["tracking_number"].strip().upper(), "tracking number")
        return {
            "tracking_number": parcel["id"],
            "carrier": parcel["carrier"],
            "status": parcel["status"],
            "origin": parcel["origin"],
            "destination": parcel["destination"],
            "shipped": parcel["shipped"],
        }

    return [
        api(
            "logistics.quote",
            ("Shipping Quote", "getShippingRate", "rate"),
            style,
            "GET",
            "/rates",
            "Price and days to ship a parcel between cities.",
            quote,
            (p("origin", S, "city", "Berlin"), p("destination", S, "city", "Paris"), p("weight_kg", N, "kg", 2)),
        ),
        api(
            "logistics.track",
            ("Track Parcel", "trackShipment", "track"),
            style,
            "GET",
            "/track",
            "Where a parcel is.",
            track,
            (p("tracking_number", S, "tracking number", "TRK0007919"),),
        ),
    ]


def flights_service(style: int) -> list[Api]:
    def search(ctx: Context, a: dict[str, Any]) -> Any:
        origin = row(ctx.world, "airports", a["origin"], "airport")["id"]
        destination = row(ctx.world, "airports", a["destination"], "airport")["id"]
        _day_offset(a["date"], 0, FORECAST_DAYS - 1)
        found = [
            f
            for f in ctx.world.rows("flights")
            if (f["origin"], f["destination"], f["date"]) == (origin, destination, a["date"])
        ]
        return {"origin": origin, "destination": destination, "date": a["date"], "flights": found}

    def airport(ctx: Context, a: dict[str, Any]) -> Any:
        found = row(ctx.world, "airports", a["code"], "airport")
        routes = sorted({f["destination"] for f in ctx.world.rows("flights") if f["origin"] == found["id"]})
        return {**found, "destinations": routes}

    def city_airports(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        return {"city": city["name"], "airports": [x for x in ctx.world.rows("airports") if x["city_id"] == city["id"]]}

    return [
        api(
            "flights.search",
            ("Search Flights", "searchFlights", "flights"),
            style,
            "GET",
            "/flights",
            "Flights between two airports on a day of the coming week.",
            search,
            (
                p("origin", S, "IATA code", "NEK"),
                p("destination", S, "IATA code", "MEY"),
                p("date", "DATE", "YYYY-MM-DD", "2026-03-02"),
            ),
        ),
        api(
            "flights.airport",
            ("Airport Info", "getAirport", "airport"),
            style,
            "GET",
            "/airports/{code}",
            "An airport and where it flies to.",
            airport,
            (p("code", S, "IATA code", "NEK"),),
        ),
        api(
            "flights.city",
            ("City Airports", "getAirportsByCity", "city airports"),
            style,
            "GET",
            "/airports",
            "A city's airports.",
            city_airports,
            (p("city", S, "city name", "London"),),
        ),
    ]


def vision_service(style: int) -> list[Api]:
    def image(ctx: Context, key: str) -> dict[str, Any]:
        key = key.strip()
        found = ctx.world.get("images", key) or next((i for i in ctx.world.rows("images") if i["url"] == key), None)
        if found is None:
            raise ApiError(404, f"Image '{key[:80]}' not found")
        return found

    def labels(ctx: Context, a: dict[str, Any]) -> Any:
        found = image(ctx, a["image"])
        return {
            "image": found["id"],
            "labels": [{"name": n, "confidence": round(0.7 + 0.1 * k, 2)} for k, n in enumerate(found["labels"])],
        }

    def faces(ctx: Context, a: dict[str, Any]) -> Any:
        return {"image": image(ctx, a["image"])["id"], "faces": image(ctx, a["image"])["faces"]}

    def ocr(ctx: Context, a: dict[str, Any]) -> Any:
        return {"image": image(ctx, a["image"])["id"], "text": image(ctx, a["image"])["text"]}

    def resize(ctx: Context, a: dict[str, Any]) -> Any:
        found = image(ctx, a["image"])
        width = int(_bounded(a["width"], 1, 10000, "width"))
        height = round(found["height"] * width / found["width"])
        return {"image": found["id"], "width": width, "height": height, "url": f"{found['url']}?w={width}"}

    target = p("image", S, "image id or URL", "img0001")
    return [
        api(
            "vision.labels",
            ("Label Image", "detectLabels", "labels"),
            style,
            "POST",
            "/labels",
            "What an image shows.",
            labels,
            (target,),
        ),
        api(
            "vision.faces",
            ("Detect Faces", "countFaces", "faces"),
            style,
            "POST",
            "/faces",
            "How many faces an image has.",
            faces,
            (target,),
        ),
        api(
            "vision.ocr",
            ("Read Text", "extractText", "ocr"),
            style,
            "POST",
            "/ocr",
            "Text written in an image.",
            ocr,
            (target,),
        ),
        api(
            "vision.resize",
            ("Resize Image", "resizeImage", "resize"),
            style,
            "GET",
            "/resize",
            "A resized copy's size and URL (the aspect ratio is kept).",
            resize,
            (target, p("width", N, "pixels", 320)),
        ),
    ]


def ads_service(style: int) -> list[Api]:
    def performance(ctx: Context, a: dict[str, Any]) -> Any:
        campaign = row(ctx.world, "campaigns", a["campaign_id"], "campaign")
        clicks, shown, spent = campaign["clicks"], campaign["impressions"], campaign["budget_usd"]
        return {
            "campaign_id": campaign["id"],
            "ctr_percent": round(clicks / shown * 100, 2),
            "cpc_usd": round(spent / clicks, 2) if clicks else None,
            "cpm_usd": round(spent / shown * 1000, 2),
        }

    return [
        api(
            "ads.performance",
            ("Campaign Performance", "getCampaignKpis", "kpis"),
            style,
            "GET",
            "/performance",
            "Click-through rate, cost per click and per thousand views.",
            performance,
            (p("campaign_id", S, "campaign id", "ad0001"),),
        ),
    ]


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

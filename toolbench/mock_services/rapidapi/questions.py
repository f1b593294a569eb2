"""The questions the special-purpose services can answer, for the task generator.

An asker draws one question from the world: its words, the calls that answer it (named by what each
API does, ``"weather.current"``, and turned into the tool's own API names) and the fields of the
last call's response that hold the answer. Calls that use what an earlier call created (a payment's
id, a channel's id) rely on a fresh session, where the first of each is numbered 1.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from toolbench.mock_services.rapidapi.domains import Question
from toolbench.mock_services.rapidapi.world import HISTORY_DAYS, TODAY, World

Asker = Callable[[random.Random, World, dict[str, str]], Question]
WORDS = ("River", "Harbor", "Garden", "Engine", "Mirror", "Orchard", "Lantern", "Compass", "Signal", "Meadow")
LANGUAGES = {"es": "Spanish", "fr": "French", "de": "German"}


def ask(names: dict[str, str], text: str, calls: list[tuple[str, dict[str, Any]]], *facts: str) -> Question:
    """A question whose calls are named by API key (``"weather.current"``) and become this tool's names;
    its phrasing is named by its first call's key (each service question has one phrasing)."""
    return Question(text, tuple((names[key], arguments) for key, arguments in calls), facts, calls[0][0])


def _word(r: random.Random) -> str:
    return r.choice(WORDS).lower()


# ---------------------------------------------------------------------- weather, money, markets
def weather_current(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city = r.choice(w.rows("cities"))["name"]
    text = f"what is the temperature in {city} right now, and what are the conditions?"
    return ask(n, text, [("weather.current", {"city": city})], "current.temp_c", "current.condition")


def weather_forecast(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city, ahead = r.choice(w.rows("cities"))["name"], r.randint(1, 4)
    text = f"what will the maximum temperature be in {city} in {ahead} days' time (counting today as day 0)?"
    return ask(n, text, [("weather.forecast", {"city": city, "days": ahead + 1})], f"forecast.{ahead}.temp_max_c")


def weather_history(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city = r.choice(w.rows("cities"))["name"]
    when = (TODAY - timedelta(days=r.randint(1, HISTORY_DAYS))).isoformat()
    text = f"how much rain or snow fell in {city} on {when}, and what was the weather like?"
    calls = [("weather.history", {"city": city, "date": when})]
    return ask(n, text, calls, "day.precipitation_mm", "day.condition")


def currency_convert(r: random.Random, w: World, n: dict[str, str]) -> Question:
    source, target = r.sample([c["id"] for c in w.rows("currencies")], 2)
    amount = r.choice((50, 120, 250, 1000, 2500))
    text = f"how much is {amount} {source} in {target} at today's rate?"
    return ask(n, text, [("currency.convert", {"from": source, "to": target, "amount": amount})], "result")


def currency_info(r: random.Random, w: World, n: dict[str, str]) -> Question:
    code = r.choice(w.rows("currencies"))["id"]
    text = f"what is the symbol of the currency {code}, and what is its full name?"
    return ask(n, text, [("currency.info", {"code": code})], "symbol", "name")


def stocks_quote(r: random.Random, w: World, n: dict[str, str]) -> Question:
    stock = r.choice(w.rows("stocks"))
    text = f"what did {stock['name']} stock ({stock['id']}) close at today, and how much did it change in percent?"
    return ask(n, text, [("stocks.quote", {"symbol": stock["id"]})], "price", "change_percent")


def stocks_lookup(r: random.Random, w: World, n: dict[str, str]) -> Question:
    stock = r.choice(w.rows("stocks"))
    text = f"what is the ticker symbol of {stock['name']}, and where does it trade?"
    calls = [("stocks.lookup", {"keywords": stock["name"]}), ("stocks.profile", {"symbol": stock["id"]})]
    return ask(n, text, calls, "symbol", "exchange")


def stocks_history(r: random.Random, w: World, n: dict[str, str]) -> Question:
    symbol, back = r.choice(w.rows("stocks"))["id"], r.randint(1, 6)
    text = f"what was the closing price of {symbol} {back} days ago?"
    return ask(n, text, [("stocks.history", {"symbol": symbol, "days": back + 1})], f"prices.{back}.close")


def coins_price(r: random.Random, w: World, n: dict[str, str]) -> Question:
    coin, currency = r.choice(w.rows("coins")), r.choice(("USD", "EUR", "GBP", "JPY"))
    text = f"what is one {coin['name']} ({coin['id']}) worth in {currency}?"
    return ask(n, text, [("coins.price", {"symbol": coin["id"], "currency": currency})], "price")


# ---------------------------------------------------------------------- places and sports
def geo_distance(r: random.Random, w: World, n: dict[str, str]) -> Question:
    one, two = (c["name"] for c in r.sample(w.rows("cities"), 2))
    text = f"how far is it from {one} to {two} in kilometres?"
    return ask(n, text, [("geo.distance", {"from_city": one, "to_city": two})], "distance_km")


def geo_geocode(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city = r.choice(w.rows("cities"))["name"]
    return ask(n, f"what are the coordinates of {city}?", [("geo.geocode", {"address": city})], "lat", "lon")


def geo_timezone(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city = r.choice(w.rows("cities"))["name"]
    return ask(n, f"what is the UTC offset of {city}?", [("geo.timezone", {"city": city})], "utc_offset")


def sports_standings(r: random.Random, w: World, n: dict[str, str]) -> Question:
    league = r.choice(w.rows("leagues"))
    text = f"who tops the {league['name']} table, and with how many points?"
    calls = [("sports.standings", {"league_id": league["id"]})]
    return ask(n, text, calls, "standings.0.team", "standings.0.points")


def sports_match(r: random.Random, w: World, n: dict[str, str]) -> Question:
    match = r.choice(w.rows("matches"))["id"]
    text = f"what was the score of match {match}, and who played at home?"
    return ask(n, text, [("sports.match", {"match_id": match})], "home_score", "away_score", "home_team")


# ---------------------------------------------------------------------- text, codes, security
def text_count(r: random.Random, w: World, n: dict[str, str]) -> Question:
    places = ("near", "quiet", "open", "old")
    text = " ".join(f"The {_word(r)} is {r.choice(places)}." for _ in range(r.randint(2, 4)))
    question = f'how many words and sentences are in this text: "{text}"?'
    return ask(n, question, [("text.count", {"text": text})], "words", "sentences")


def text_sentiment(r: random.Random, w: World, n: dict[str, str]) -> Question:
    adjective, verb = r.choice((("great", "love"), ("terrible", "broken"), ("okay", "fine")))
    text = f"The service was {adjective} and I {verb} the result"
    question = f'is this review positive, negative or neutral: "{text}"?'
    return ask(n, question, [("text.sentiment", {"text": text})], "label")


def dictionary_translate(r: random.Random, w: World, n: dict[str, str]) -> Question:
    word, language = r.choice(w.rows("words"))["word"], r.choice(sorted(LANGUAGES))
    text = f"how do you say '{word}' in {LANGUAGES[language]}?"
    return ask(n, text, [("dictionary.translate", {"word": word, "target": language})], "translation")


def dictionary_synonyms(r: random.Random, w: World, n: dict[str, str]) -> Question:
    word = r.choice(w.rows("words"))["word"]
    return ask(n, f"give me a synonym of '{word}'.", [("dictionary.synonyms", {"word": word})], "synonyms.0")


def codes_hash(r: random.Random, w: World, n: dict[str, str]) -> Question:
    text = f"{r.choice(WORDS)}{r.randint(10, 99)}"
    calls = [("codes.hash", {"text": text, "algorithm": "md5"})]
    return ask(n, f"what is the MD5 hash of the text '{text}'?", calls, "hash")


def codes_encode(r: random.Random, w: World, n: dict[str, str]) -> Question:
    text = _word(r)
    return ask(n, f"encode '{text}' in base64.", [("codes.encode", {"text": text})], "encoded")


def security_ssl(r: random.Random, w: World, n: dict[str, str]) -> Question:
    domain = r.choice(w.rows("domains"))["id"]
    text = f"when does the SSL certificate of {domain} expire?"
    return ask(n, text, [("security.ssl", {"domain": domain})], "expires")


def security_status(r: random.Random, w: World, n: dict[str, str]) -> Question:
    domain = r.choice(w.rows("domains"))["id"]
    text = f"is {domain} up right now, and how fast does it respond (in ms)?"
    return ask(n, text, [("security.status", {"domain": domain})], "status", "response_ms")


def security_password(r: random.Random, w: World, n: dict[str, str]) -> Question:
    password = _word(r) + r.choice(("", "1", "!9", "#Q7x"))
    text = f"how strong is the password '{password}'?"
    return ask(n, text, [("security.password", {"password": password})], "strength")


# ---------------------------------------------------------------------- services that keep state
def messaging_sms(r: random.Random, w: World, n: dict[str, str]) -> Question:
    number = f"{r.choice(w.rows('countries'))['calling_code']}5550{r.randint(1000, 9999)}"
    message = "Running late, start without me"
    text = f"send the text '{message}' to {number} and tell me its message id and cost."
    return ask(n, text, [("messaging.send_sms", {"to": number, "message": message})], "id", "cost_usd")


def storage_upload(r: random.Random, w: World, n: dict[str, str]) -> Question:
    name = f"{_word(r)}.txt"
    text = f"save a file called {name} containing 'meeting at noon', then tell me its id and size in bytes."
    calls = [("storage.upload", {"name": name, "content": "meeting at noon"}), ("storage.list", {})]
    return ask(n, text, calls, "files.0.id", "files.0.size")


def payments_refund(r: random.Random, w: World, n: dict[str, str]) -> Question:
    amount = r.choice((15, 40, 75))
    text = f"charge {amount} EUR for a workshop ticket and then refund it; what is the payment's final status?"
    calls = [
        ("payments.create", {"amount": amount, "currency": "EUR", "description": "workshop ticket"}),
        ("payments.refund", {"payment_id": "pay_00001"}),
    ]
    return ask(n, text, calls, "status", "refunded")


def rewards_redeem(r: random.Random, w: World, n: dict[str, str]) -> Question:
    user, earned, spent = _word(r), r.choice((200, 500)), r.choice((50, 120))
    text = f"add {earned} points to user {user}, redeem {spent} of them, and tell me the balance."
    calls = [("rewards.add", {"user": user, "points": earned}), ("rewards.redeem", {"user": user, "points": spent})]
    return ask(n, text, calls, "balance")


def cart_checkout(r: random.Random, w: World, n: dict[str, str]) -> Question:
    product = r.choice([p for p in w.rows("products") if p["in_stock"]])["id"]
    text = f"put two of product {product} in my cart and check out; what is the order's total?"
    calls = [("cart.add", {"product_id": product, "quantity": 2}), ("cart.checkout", {})]
    return ask(n, text, calls, "total_usd")


def chat_channel(r: random.Random, w: World, n: dict[str, str]) -> Question:
    name, message = r.choice(("launch", "design", "support")), r.choice(("we ship friday", "review at 3"))
    text = f"open a channel named '{name}', post '{message}' in it, and tell me how many messages it holds."
    calls = [
        ("chat.create", {"name": name}),
        ("chat.post", {"channel_id": "C0001", "text": message}),
        ("chat.history", {"channel_id": "C0001"}),
    ]
    return ask(n, text, calls, "count")


def links_shorten(r: random.Random, w: World, n: dict[str, str]) -> Question:
    url = f"https://{r.choice(w.rows('domains'))['id']}/{_word(r)}"
    return ask(n, f"make a short link for {url}.", [("links.shorten", {"url": url})], "short_url")


# ---------------------------------------------------------------------- calculators and the rest
def utils_between(r: random.Random, w: World, n: dict[str, str]) -> Question:
    start = f"2026-0{r.randint(1, 4)}-{r.randint(10, 28)}"
    end = f"2026-{r.randint(6, 12):02d}-{r.randint(10, 28)}"
    text = f"how many days are there from {start} to {end}?"
    return ask(n, text, [("utils.between", {"start": start, "end": end})], "days")


def utils_weekday(r: random.Random, w: World, n: dict[str, str]) -> Question:
    when = f"{r.randint(1990, 2030)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
    return ask(n, f"what day of the week is {when}?", [("utils.weekday", {"date": when})], "weekday")


def utils_units(r: random.Random, w: World, n: dict[str, str]) -> Question:
    value, (source, target) = (
        r.choice((5, 12, 42, 100)),
        r.choice((("km", "mi"), ("lb", "kg"), ("c", "f"), ("ft", "m"))),
    )
    text = f"convert {value} {source} to {target}."
    return ask(n, text, [("utils.units", {"value": value, "from": source, "to": target})], "result")


def utils_prime(r: random.Random, w: World, n: dict[str, str]) -> Question:
    number = r.randint(1000, 99999)
    while all(number % d for d in range(2, int(number**0.5) + 1)):  # a composite: the divisor is the answer
        number += 1
    text = f"what is the smallest divisor of {number} other than 1?"
    return ask(n, text, [("utils.prime", {"number": number})], "smallest_divisor")


def health_bmi(r: random.Random, w: World, n: dict[str, str]) -> Question:
    weight, height = r.randint(50, 110), r.randint(155, 195)
    text = f"what is the BMI of someone who weighs {weight} kg and is {height} cm tall, and which category is it?"
    return ask(n, text, [("health.bmi", {"weight_kg": weight, "height_cm": height})], "bmi", "category")


def health_nutrition(r: random.Random, w: World, n: dict[str, str]) -> Question:
    food, grams = r.choice(w.rows("foods"))["name"], r.choice((50, 150, 200, 250))
    text = f"how many calories are in {grams} g of {food}?"
    return ask(n, text, [("health.nutrition", {"food": food, "grams": grams})], "calories")


def energy_price(r: random.Random, w: World, n: dict[str, str]) -> Question:
    country = r.choice(w.rows("countries"))
    text = f"what does a kWh of electricity cost in {country['name']} today?"
    return ask(n, text, [("energy.price", {"country": country["id"]})], "price_per_kwh_usd")


def energy_solar(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city, kw = r.choice(w.rows("cities"))["name"], r.choice((3, 5, 8))
    text = f"how many kWh a day would {kw} kW of solar panels make in {city}?"
    return ask(n, text, [("energy.solar", {"city": city, "panel_kw": kw})], "kwh_per_day")


def logistics_track(r: random.Random, w: World, n: dict[str, str]) -> Question:
    parcel = r.choice(w.rows("parcels"))["id"]
    text = f"where is my parcel {parcel}? What is its status and destination?"
    return ask(n, text, [("logistics.track", {"tracking_number": parcel})], "status", "destination")


def logistics_quote(r: random.Random, w: World, n: dict[str, str]) -> Question:
    (one, two), kg = (c["name"] for c in r.sample(w.rows("cities"), 2)), r.choice((1, 3, 5, 12))
    text = f"how much would it cost to ship {kg} kg from {one} to {two}?"
    return ask(n, text, [("logistics.quote", {"origin": one, "destination": two, "weight_kg": kg})], "price_usd")


def flights_airport(r: random.Random, w: World, n: dict[str, str]) -> Question:
    code = r.choice(w.rows("airports"))["id"]
    text = f"what is the name of airport {code}, and in which country is it?"
    return ask(n, text, [("flights.airport", {"code": code})], "name", "country")


def vision_labels(r: random.Random, w: World, n: dict[str, str]) -> Question:
    url = r.choice(w.rows("images"))["url"]
    calls = [("vision.labels", {"image": url})]
    return ask(n, f"what does the image {url} show?", calls, "labels.0.name", "labels.1.name", "labels.2.name")


def vision_faces(r: random.Random, w: World, n: dict[str, str]) -> Question:
    image = r.choice(w.rows("images"))["id"]
    return ask(n, f"how many faces are in image {image}?", [("vision.faces", {"image": image})], "faces")


def vision_resize(r: random.Random, w: World, n: dict[str, str]) -> Question:
    image, width = r.choice(w.rows("images"))["id"], r.choice((320, 480, 800))
    text = f"if I resize image {image} to {width} pixels wide, how tall will it be?"
    return ask(n, text, [("vision.resize", {"image": image, "width": width})], "height")


def ads_performance(r: random.Random, w: World, n: dict[str, str]) -> Question:
    campaign = r.choice(w.rows("campaigns"))["id"]
    text = f"what is the click-through rate of campaign {campaign} in percent?"
    return ask(n, text, [("ads.performance", {"campaign_id": campaign})], "ctr_percent")


# ---------------------------------------------------------------------- more of each service
def codes_decode(r: random.Random, w: World, n: dict[str, str]) -> Question:
    word = f"{_word(r)} {_word(r)}"
    data = base64.b64encode(word.encode()).decode()
    return ask(n, f"what does the base64 text {data} decode to?", [("codes.decode", {"data": data})], "decoded")


def codes_rot13(r: random.Random, w: World, n: dict[str, str]) -> Question:
    text = f"{_word(r)} at {r.choice(('dawn', 'noon', 'dusk'))}"
    return ask(n, f"what is '{text}' in ROT13?", [("codes.rot13", {"text": text})], "result")


def coins_market(r: random.Random, w: World, n: dict[str, str]) -> Question:
    place = r.choice((0, 1, 2))
    rank = ("largest", "second largest", "third largest")[place]
    text = f"which coin has the {rank} market capitalization, and how large is it?"
    return ask(n, text, [("coins.market", {})], f"coins.{place}.name", f"coins.{place}.market_cap_usd")


def currency_latest(r: random.Random, w: World, n: dict[str, str]) -> Question:
    base, target = r.sample([c["id"] for c in w.rows("currencies")], 2)
    text = f"with {base} as the base, what is today's exchange rate for {target}?"
    return ask(n, text, [("currency.latest", {"base": base})], f"rates.{target}")


def energy_carbon(r: random.Random, w: World, n: dict[str, str]) -> Question:
    country = r.choice(w.rows("countries"))
    text = f"how many grams of CO2 does a kWh from the grid in {country['name']} emit?"
    return ask(n, text, [("energy.carbon", {"country": country["id"]})], "grams_co2_per_kwh")


def flights_search(r: random.Random, w: World, n: dict[str, str]) -> Question:
    flight = r.choice(w.rows("flights"))
    text = (
        f"which flight goes from {flight['origin']} to {flight['destination']} on {flight['date']}, "
        "and what does it cost?"
    )
    calls = [
        ("flights.search", {"origin": flight["origin"], "destination": flight["destination"], "date": flight["date"]})
    ]
    return ask(n, text, calls, "flights.0.flight_number", "flights.0.price_usd")


def geo_reverse(r: random.Random, w: World, n: dict[str, str]) -> Question:
    city = r.choice(w.rows("cities"))
    lat, lon = round(city["lat"] + r.uniform(-0.3, 0.3), 2), round(city["lon"] + r.uniform(-0.3, 0.3), 2)
    text = f"which city is nearest to latitude {lat}, longitude {lon}?"
    return ask(n, text, [("geo.reverse", {"lat": lat, "lon": lon})], "nearest_city")


def health_burned(r: random.Random, w: World, n: dict[str, str]) -> Question:
    activity, minutes, weight = (
        r.choice(("walking", "running", "cycling", "swimming", "yoga")),
        r.choice((20, 45, 60)),
        r.randint(55, 95),
    )
    text = f"how many calories does {minutes} minutes of {activity} burn for someone weighing {weight} kg?"
    calls = [("health.burned", {"activity": activity, "minutes": minutes, "weight_kg": weight})]
    return ask(n, text, calls, "calories")


def dictionary_define(r: random.Random, w: World, n: dict[str, str]) -> Question:
    word = r.choice(w.rows("words"))["word"]
    return ask(n, f"what part of speech is '{word}'?", [("dictionary.define", {"word": word})], "part_of_speech")


def security_ip(r: random.Random, w: World, n: dict[str, str]) -> Question:
    ip = r.choice(w.rows("domains"))["ip"]
    return ask(n, f"which domain is hosted at the IP address {ip}?", [("security.ip", {"ip": ip})], "domains.0")


def sports_team_matches(r: random.Random, w: World, n: dict[str, str]) -> Question:
    team = r.choice(w.rows("teams"))
    text = (
        f"how many goals did the home side score in the first match of team {team['id']} ({team['name']}) this season?"
    )
    return ask(n, text, [("sports.team_matches", {"team_id": team["id"]})], "matches.0.home_score", "matches.0.date")


def messaging_phone(r: random.Random, w: World, n: dict[str, str]) -> Question:
    country = r.choice(w.rows("countries"))
    number = f"{country['calling_code']} 7{r.randint(100, 999)} {r.randint(100000, 999999)}"
    text = f"which country does the phone number {number} belong to?"
    return ask(n, text, [("messaging.validate_phone", {"number": number})], "country")


ASKS: dict[str, Asker] = {
    "weather.current": weather_current, "weather.forecast": weather_forecast, "weather.history": weather_history,
    "currency.convert": currency_convert, "currency.info": currency_info, "stocks.quote": stocks_quote,
    "stocks.lookup": stocks_lookup, "stocks.history": stocks_history, "coins.price": coins_price,
    "geo.distance": geo_distance, "geo.geocode": geo_geocode, "geo.timezone": geo_timezone,
    "sports.standings": sports_standings, "sports.match": sports_match, "text.count": text_count,
    "text.sentiment": text_sentiment, "dictionary.translate": dictionary_translate,
    "dictionary.synonyms": dictionary_synonyms, "codes.hash": codes_hash, "codes.encode": codes_encode,
    "security.ssl": security_ssl, "security.status": security_status, "security.password": security_password,
    "messaging.send_sms": messaging_sms,
    "storage.upload": storage_upload, "payments.create": payments_refund, "rewards.add": rewards_redeem,
    "cart.add": cart_checkout, "chat.create": chat_channel, "links.shorten": links_shorten,
    "utils.between": utils_between, "utils.weekday": utils_weekday, "utils.units": utils_units,
    "utils.prime": utils_prime, "health.bmi": health_bmi, "health.nutrition": health_nutrition,
    "energy.price": energy_price, "energy.solar": energy_solar, "logistics.track": logistics_track,
    "logistics.quote": logistics_quote, "flights.airport": flights_airport, "vision.labels": vision_labels,
    "vision.faces": vision_faces, "vision.resize": vision_resize, "ads.performance": ads_performance,
    "codes.decode": codes_decode, "codes.rot13": codes_rot13, "coins.market": coins_market,
    "currency.latest": currency_latest, "energy.carbon": energy_carbon, "flights.search": flights_search,
    "geo.reverse": geo_reverse, "health.burned": health_burned, "dictionary.define": dictionary_define,
    "security.ip": security_ip, "sports.team_matches": sports_team_matches, "messaging.validate_phone": messaging_phone,
}  # fmt: skip

"""Money and markets: currency conversion, rates and facts; stock quotes, histories, profiles and
look-ups; coin prices and markets.
"""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.rapidapi.domains import DOMAINS, search_rows
from toolbench.mock_services.rapidapi.hub import Api, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, p, row
from toolbench.mock_services.rapidapi.world import HISTORY_DAYS, TODAY, convert, stock_price


def currency_service(style: int) -> list[Api]:
    def convert_(ctx: Context, a: dict[str, Any]) -> Any:
        source = row(ctx.world, "currencies", a["from"], "currency")["id"]
        target = row(ctx.world, "currencies", a["to"], "currency")["id"]
        amount = bounded(a["amount"], 0, 1e12, "amount")
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
        days = int(bounded(a.get("days", 5), 1, HISTORY_DAYS, "days"))
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

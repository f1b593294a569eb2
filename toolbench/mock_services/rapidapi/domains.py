"""Generic APIs over one table of the world: search, details, lists with filters and pages, a
parent's children, top rows and statistics; and the questions each can answer (for task generation).

A ``Domain`` says how a table is shown (its noun, the name a search matches, the fields a list
shows, the fields a list can filter and sort by, its parent table). ``domain_apis`` builds the APIs
one tool offers over it, named in one of three styles, so tools over the same table still look like
different products ("Search Movies" / "searchMovies" / "movie search").
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context, Param
from toolbench.mock_services.rapidapi.world import World

MAX_PAGE_SIZE = 50


@dataclass(frozen=True)
class Question:
    """What a user may ask one tool: the words, the calls that answer it (API name, arguments), the
    fields of the last call's response that hold the answer (dotted paths, ``results.0.name``), and
    the id of the phrasing the words come from (``"get.name.1"``, ``"weather.current"``)."""

    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    facts: tuple[str, ...]
    template: str = ""


@dataclass(frozen=True)
class Domain:
    table: str
    noun: str
    plural: str
    name_field: str
    summary: tuple[str, ...]
    filters: tuple[tuple[str, str], ...] = ()  # (field, ToolBench type) a list can filter on
    numbers: tuple[str, ...] = ()  # fields a list can sort by and statistics can summarize
    parent: tuple[str, str, str] | None = None  # (foreign key, parent table, parent noun)
    ask_fields: tuple[str, ...] = ()  # fields a question about one row asks for

    @property
    def id_param(self) -> str:
        return f"{self.noun.replace(' ', '_')}_id"


DOMAINS: dict[str, Domain] = {
    d.table: d
    for d in (
        Domain(
            "cities",
            "city",
            "cities",
            "name",
            ("id", "name", "country"),
            (("country", "STRING"),),
            ("population", "elevation_m"),
            ("country", "countries", "country"),
            ("population", "utc_offset", "lat"),
        ),
        Domain(
            "countries",
            "country",
            "countries",
            "name",
            ("id", "name", "region"),
            (("region", "STRING"),),
            ("population",),
            None,
            ("currency", "calling_code", "population", "language"),
        ),
        Domain(
            "companies",
            "company",
            "companies",
            "name",
            ("id", "name", "industry"),
            (("industry", "STRING"),),
            ("employees", "founded"),
            ("city_id", "cities", "city"),
            ("ceo", "founded", "employees", "ticker"),
        ),
        Domain(
            "teams",
            "team",
            "teams",
            "name",
            ("id", "name", "league_id"),
            (("league_id", "STRING"),),
            ("founded",),
            ("league_id", "leagues", "league"),
            ("stadium", "coach", "founded"),
        ),
        Domain(
            "players",
            "player",
            "players",
            "name",
            ("id", "name", "team_id", "position"),
            (("position", "STRING"), ("nationality", "STRING")),
            ("scored", "assists", "age", "appearances"),
            ("team_id", "teams", "team"),
            ("position", "age", "scored", "assists"),
        ),
        Domain(
            "leagues",
            "league",
            "leagues",
            "name",
            ("id", "name", "sport"),
            (("sport", "STRING"),),
            (),
            None,
            ("sport", "country", "season"),
        ),
        Domain(
            "movies",
            "movie",
            "movies",
            "title",
            ("id", "title", "year", "rating"),
            (("genre", "STRING"), ("year", "NUMBER"), ("language", "STRING")),
            ("rating", "year", "runtime_min", "box_office_usd"),
            None,
            ("year", "genre", "rating", "runtime_min"),
        ),
        Domain(
            "people",
            "person",
            "people",
            "name",
            ("id", "name", "born"),
            (("country", "STRING"),),
            ("born",),
            None,
            ("born", "country"),
        ),
        Domain(
            "artists",
            "artist",
            "artists",
            "name",
            ("id", "name", "genre"),
            (("genre", "STRING"), ("country", "STRING")),
            ("monthly_listeners", "formed"),
            None,
            ("genre", "formed", "monthly_listeners", "country"),
        ),
        Domain(
            "albums",
            "album",
            "albums",
            "title",
            ("id", "title", "year"),
            (("year", "NUMBER"),),
            ("year", "tracks"),
            ("artist_id", "artists", "artist"),
            ("year", "tracks"),
        ),
        Domain(
            "songs",
            "song",
            "songs",
            "title",
            ("id", "title", "artist_id", "plays"),
            (("genre", "STRING"), ("year", "NUMBER")),
            ("plays", "duration_s", "year"),
            ("album_id", "albums", "album"),
            ("duration_s", "plays", "year"),
        ),
        Domain(
            "books",
            "book",
            "books",
            "title",
            ("id", "title", "author"),
            (("genre", "STRING"), ("year", "NUMBER")),
            ("pages", "year"),
            None,
            ("author", "year", "pages", "publisher"),
        ),
        Domain(
            "games",
            "game",
            "games",
            "title",
            ("id", "title", "platform"),
            (("platform", "STRING"), ("genre", "STRING")),
            ("rating", "year", "price_usd"),
            None,
            ("platform", "genre", "year", "rating", "developer"),
        ),
        Domain(
            "articles",
            "article",
            "articles",
            "title",
            ("id", "title", "source", "date"),
            (("topic", "STRING"), ("source", "STRING")),
            ("words",),
            None,
            ("source", "author", "date", "words"),
        ),
        Domain(
            "recipes",
            "recipe",
            "recipes",
            "name",
            ("id", "name", "cuisine", "calories"),
            (("cuisine", "STRING"), ("diet", "STRING")),
            ("calories", "prep_minutes", "servings"),
            None,
            ("calories", "prep_minutes", "servings", "diet"),
        ),
        Domain(
            "foods",
            "food",
            "foods",
            "name",
            ("id", "name", "calories"),
            (),
            ("calories", "protein_g", "fat_g", "carbs_g"),
            None,
            ("calories", "protein_g", "fat_g", "carbs_g"),
        ),
        Domain(
            "products",
            "product",
            "products",
            "name",
            ("id", "name", "price_usd", "rating"),
            (("category", "STRING"), ("brand", "STRING"), ("in_stock", "BOOLEAN")),
            ("price_usd", "rating", "reviews"),
            None,
            ("price_usd", "rating", "reviews", "brand"),
        ),
        Domain(
            "jobs",
            "job",
            "jobs",
            "title",
            ("id", "title", "company_id", "city_id"),
            (("type", "STRING"), ("remote", "BOOLEAN"), ("city_id", "STRING")),
            ("salary_min", "salary_max"),
            ("company_id", "companies", "company"),
            ("salary_min", "salary_max", "type", "posted"),
        ),
        Domain(
            "events",
            "event",
            "events",
            "name",
            ("id", "name", "date", "city_id"),
            (("kind", "STRING"), ("city_id", "STRING")),
            ("price_usd", "capacity"),
            ("city_id", "cities", "city"),
            ("date", "venue", "price_usd", "kind"),
        ),
        Domain(
            "hotels",
            "hotel",
            "hotels",
            "name",
            ("id", "name", "stars", "price_per_night_usd"),
            (("stars", "NUMBER"),),
            ("price_per_night_usd", "rating", "rooms"),
            ("city_id", "cities", "city"),
            ("stars", "price_per_night_usd", "rating"),
        ),
        Domain(
            "domains",
            "domain",
            "domains",
            "id",
            ("id", "status", "registrar"),
            (("status", "STRING"), ("registrar", "STRING")),
            ("response_ms",),
            None,
            ("ip", "registrar", "created", "status"),
        ),
        Domain(
            "drugs",
            "drug",
            "drugs",
            "name",
            ("id", "name", "drug_class"),
            (("drug_class", "STRING"),),
            ("max_daily_mg",),
            None,
            ("drug_class", "max_daily_mg"),
        ),
        Domain(
            "courses",
            "course",
            "courses",
            "title",
            ("id", "title", "level", "rating"),
            (("subject", "STRING"), ("level", "STRING")),
            ("hours", "rating", "price_usd"),
            None,
            ("instructor", "hours", "level", "price_usd"),
        ),
        Domain(
            "campaigns",
            "campaign",
            "campaigns",
            "name",
            ("id", "name", "channel"),
            (("channel", "STRING"),),
            ("budget_usd", "impressions", "clicks"),
            None,
            ("advertiser", "budget_usd", "impressions", "clicks"),
        ),
        Domain(
            "devices",
            "device",
            "devices",
            "model",
            ("id", "model", "type", "price_usd"),
            (("type", "STRING"), ("maker", "STRING")),
            ("price_usd", "battery_mah", "released"),
            None,
            ("released", "battery_mah", "price_usd"),
        ),
        Domain(
            "parcels",
            "parcel",
            "parcels",
            "id",
            ("id", "carrier", "status"),
            (("carrier", "STRING"), ("status", "STRING")),
            ("weight_kg",),
            None,
            ("status", "destination", "weight_kg", "carrier"),
        ),
        Domain(
            "coins",
            "coin",
            "coins",
            "name",
            ("id", "name", "price_usd"),
            (),
            ("price_usd", "supply"),
            None,
            ("price_usd", "supply", "launched"),
        ),
        Domain(
            "images",
            "image",
            "images",
            "url",
            ("id", "url", "format"),
            (("format", "STRING"),),
            ("width", "size_kb"),
            None,
            ("width", "height", "format", "size_kb"),
        ),
    )
}

KINDS = ("search", "get", "list", "children", "top", "stats")
STYLES = 3


def _title(text: str) -> str:
    return " ".join(word.capitalize() for word in text.split())


def _camel(text: str) -> str:
    words = text.replace("_", " ").split()
    return words[0].lower() + "".join(word.capitalize() for word in words[1:])


def api_name(kind: str, domain: Domain, style: int) -> str:
    """The API's name in one of three naming styles."""
    noun, plural = domain.noun, domain.plural
    parent = domain.parent[2] if domain.parent else ""
    names = {
        "search": (f"Search {_title(plural)}", f"search {_title(plural)}", f"{noun} search"),
        "get": (f"Get {_title(noun)} Details", f"get {_title(noun)} By Id", f"{noun} info"),
        "list": (f"List {_title(plural)}", f"list {_title(plural)}", plural),
        "children": (
            f"{_title(parent)} {_title(plural)}",
            f"get {_title(plural)} By {_title(parent)}",
            f"{plural} of {parent}",
        ),
        "top": (f"Top {_title(plural)}", f"get Top {_title(plural)}", f"best {plural}"),
        "stats": (f"{_title(noun)} Statistics", f"get {_title(noun)} Stats", f"{noun} stats"),
    }
    name = names[kind][style % STYLES]
    return _camel(name) if style % STYLES == 1 else name


def _summary(domain: Domain, row: dict[str, Any], extra: str | None = None) -> dict[str, Any]:
    shown = {key: row[key] for key in domain.summary}
    if extra and extra not in shown:
        shown[extra] = row[extra]
    return shown


def _page(rows: list[dict[str, Any]], args: dict[str, Any]) -> tuple[list[dict[str, Any]], int, int]:
    page = max(1, int(args.get("page", 1)))
    size = min(MAX_PAGE_SIZE, max(1, int(args.get("limit", 10))))
    return rows[(page - 1) * size : page * size], page, size


def _matches(row: dict[str, Any], field: str, wanted: Any) -> bool:
    value = row.get(field)
    if isinstance(value, bool) or isinstance(wanted, bool):
        return value is wanted
    if isinstance(value, (int, float)):
        return isinstance(wanted, (int, float)) and value == wanted
    return str(value).lower() == str(wanted).lower()


def search_rows(world: World, domain: Domain, query: str) -> list[dict[str, Any]]:
    """Rows whose name holds every word of ``query`` (case-insensitive), in table order."""
    words = query.lower().split()
    if not words:
        raise ApiError(400, "Invalid value for parameter 'query': it is empty")
    return [row for row in world.rows(domain.table) if all(w in str(row[domain.name_field]).lower() for w in words)]


def _one(world: World, domain: Domain, key: Any) -> dict[str, Any]:
    row = world.get(domain.table, key)
    if row is None:
        raise ApiError(404, f"No {domain.noun} with id '{str(key)[:80]}'")
    return row


def _handler(kind: str, domain: Domain) -> Any:
    def search(ctx: Context, args: dict[str, Any]) -> Any:
        found = search_rows(ctx.world, domain, args["query"])
        limit = min(MAX_PAGE_SIZE, max(1, int(args.get("limit", 10))))
        return {"query": args["query"], "count": len(found), "results": [_summary(domain, r) for r in found[:limit]]}

    def get(ctx: Context, args: dict[str, Any]) -> Any:
        return dict(_one(ctx.world, domain, args[domain.id_param]))

    def listing(ctx: Context, args: dict[str, Any]) -> Any:
        rows = ctx.world.rows(domain.table)
        for field, _ in domain.filters:
            if field in args:
                rows = [row for row in rows if _matches(row, field, args[field])]
        if "sort_by" in args:
            reverse = args.get("order", "desc") == "desc"
            rows = sorted(rows, key=lambda row: (row[args["sort_by"]], row["id"]), reverse=reverse)
        shown, page, size = _page(rows, args)
        extra = args.get("sort_by")
        return {
            "page": page,
            "per_page": size,
            "total": len(rows),
            "results": [_summary(domain, r, extra) for r in shown],
        }

    def children(ctx: Context, args: dict[str, Any]) -> Any:
        assert domain.parent is not None
        key, table, noun = domain.parent
        parent = ctx.world.get(table, args[f"{noun}_id"])
        if parent is None:
            raise ApiError(404, f"No {noun} with id '{str(args[f'{noun}_id'])[:80]}'")
        rows = [row for row in ctx.world.rows(domain.table) if row[key] == parent["id"]]
        shown, page, size = _page(rows, args)
        return {
            f"{noun}_id": parent["id"],
            "page": page,
            "total": len(rows),
            "results": [_summary(domain, r) for r in shown],
        }

    def top(ctx: Context, args: dict[str, Any]) -> Any:
        by = args["by"]
        rows = sorted(ctx.world.rows(domain.table), key=lambda row: (-row[by], row["id"]))
        limit = min(MAX_PAGE_SIZE, max(1, int(args.get("limit", 5))))
        return {"by": by, "results": [_summary(domain, r, by) for r in rows[:limit]]}

    def stats(ctx: Context, args: dict[str, Any]) -> Any:
        rows = ctx.world.rows(domain.table)
        for field, _ in domain.filters:
            if field in args:
                rows = [row for row in rows if _matches(row, field, args[field])]
        values = [row[args["field"]] for row in rows]
        if not values:
            return {"field": args["field"], "count": 0, "average": None, "min": None, "max": None}
        average = round(sum(values) / len(values), 2)
        return {
            "field": args["field"],
            "count": len(values),
            "average": average,
            "min": min(values),
            "max": max(values),
        }

    return {"search": search, "get": get, "list": listing, "children": children, "top": top, "stats": stats}[kind]


PAGE = Param("page", "NUMBER", "page number, from 1", 1)
LIMIT = Param("limit", "NUMBER", f"results per page (at most {MAX_PAGE_SIZE})", 10)


def _params(kind: str, domain: Domain) -> tuple[tuple[Param, ...], tuple[Param, ...]]:
    filters = tuple(
        Param(field, kind_, f"only {domain.plural} whose {field} is this") for field, kind_ in domain.filters
    )
    numbers = tuple(domain.numbers)
    if kind == "search":
        return (Param("query", "STRING", f"words of the {domain.noun}'s {domain.name_field}"),), (LIMIT,)
    if kind == "get":
        return (Param(domain.id_param, "STRING", f"the {domain.noun}'s id"),), ()
    if kind == "list":
        sort = (
            Param("sort_by", "ENUM", f"one of {', '.join(numbers)}", "", numbers),
            Param("order", "ENUM", "asc or desc", "desc", ("asc", "desc")),
        )
        return (), (*filters, PAGE, LIMIT, *(sort if numbers else ()))
    if kind == "children":
        assert domain.parent is not None
        noun = domain.parent[2]
        return (Param(f"{noun}_id", "STRING", f"the {noun}'s id"),), (PAGE, LIMIT)
    if kind == "top":
        return (Param("by", "ENUM", f"one of {', '.join(numbers)}", numbers[0], numbers),), (
            Param("limit", "NUMBER", "how many", 5),
        )
    return (Param("field", "ENUM", f"one of {', '.join(numbers)}", numbers[0], numbers),), filters


def available(kind: str, domain: Domain) -> bool:
    if kind == "children":
        return domain.parent is not None
    if kind in ("top", "stats"):
        return bool(domain.numbers)
    return True


def domain_apis(table: str, kinds: tuple[str, ...], style: int) -> list[Api]:
    """The APIs of ``kinds`` over ``table`` (kinds the table cannot offer are left out)."""
    domain = DOMAINS[table]
    prefix = ("", "/api", "/v2")[style % STYLES]
    parent_table, parent_noun = (domain.parent[1], domain.parent[2]) if domain.parent else ("", "")
    paths = {
        "search": f"/{domain.plural}/search",
        "get": f"/{domain.plural}/{{{domain.id_param}}}",
        "list": f"/{domain.plural}",
        "children": f"/{parent_table}/{{{parent_noun}_id}}/{domain.plural}",
        "top": f"/{domain.plural}/top",
        "stats": f"/{domain.plural}/stats",
    }
    describe = {
        "search": f"Finds {domain.plural} whose {domain.name_field} contains every word of the query.",
        "get": f"Everything known about one {domain.noun}, by its id.",
        "list": f"Lists {domain.plural}, a page at a time, optionally filtered and sorted.",
        "children": f"The {domain.plural} of one {domain.parent[2] if domain.parent else ''}.",
        "top": f"The {domain.plural} with the highest value of a field.",
        "stats": f"Count, average, minimum and maximum of a numeric field over {domain.plural}.",
    }
    apis = []
    for kind in kinds:
        if not available(kind, domain):
            continue
        required, optional = _params(kind, domain)
        apis.append(
            Api(
                api_name(kind, domain, style),
                "GET",
                prefix + paths[kind],
                describe[kind],
                _handler(kind, domain),
                required,
                optional,
                f"{table}.{kind}",
            )
        )
    return apis


# ---------------------------------------------------------------------- questions
def _field_words(field: str) -> str:
    words = {
        "utc_offset": "UTC offset",
        "lat": "latitude",
        "runtime_min": "running time in minutes",
        "ceo": "CEO",
        "price_usd": "price in US dollars",
        "price_per_night_usd": "price per night in US dollars",
        "box_office_usd": "box office in US dollars",
        "duration_s": "length in seconds",
        "max_daily_mg": "maximum daily dose in mg",
        "salary_min": "minimum salary",
        "salary_max": "maximum salary",
        "prep_minutes": "preparation time in minutes",
        "protein_g": "protein per 100 g",
        "fat_g": "fat per 100 g",
        "carbs_g": "carbohydrates per 100 g",
        "size_kb": "file size in KB",
        "weight_kg": "weight in kg",
        "budget_usd": "budget in US dollars",
        "elevation_m": "elevation in metres",
        "battery_mah": "battery capacity in mAh",
        "scored": "number of goals or points scored",
    }
    return words.get(field, field.replace("_", " "))


def ask_about_row(r: random.Random, world: World, table: str, names: dict[str, str]) -> Question:
    """Look one row up by name, then ask for two of its fields: a search, then the details by id."""
    domain = DOMAINS[table]
    row = r.choice(world.rows(table))
    fields = r.sample(domain.ask_fields, min(2, len(domain.ask_fields)))
    label = row[domain.name_field]
    wanted = " and ".join(f"the {_field_words(f)}" for f in fields)
    if len(search_rows(world, domain, str(label))) != 1:  # a name others share: ask by id
        text = f"what are {wanted} of the {domain.noun} with id {row['id']}?"
        return Question(text, ((names[f"{table}.get"], {domain.id_param: row["id"]}),), tuple(fields), "get.id")
    phrasing, text = r.choice(
        (
            (0, f"what are {wanted} of the {domain.noun} '{label}'?"),
            (1, f"I need {wanted} for the {domain.noun} called '{label}'."),
            (2, f"could you tell me {wanted} of '{label}' (a {domain.noun})?"),
        )
    )
    calls = ((names[f"{table}.search"], {"query": str(label)}), (names[f"{table}.get"], {domain.id_param: row["id"]}))
    return Question(text, calls, tuple(fields), f"get.name.{phrasing}")


def ask_top(r: random.Random, world: World, table: str, names: dict[str, str]) -> Question:
    domain = DOMAINS[table]
    by = r.choice(domain.numbers)
    limit = r.choice((1, 3))
    text = (
        f"which {domain.noun} has the highest {_field_words(by)}, and what is that value?"
        if limit == 1
        else f"list the three {domain.plural} with the highest {_field_words(by)}."
    )
    facts = (
        ("results.0." + domain.name_field, "results.0." + by)
        if limit == 1
        else tuple(f"results.{n}.{domain.name_field}" for n in range(3))
    )
    return Question(text, ((names[f"{table}.top"], {"by": by, "limit": limit}),), facts, f"top.{limit}")


def ask_stats(r: random.Random, world: World, table: str, names: dict[str, str]) -> Question:
    domain = DOMAINS[table]
    field = r.choice(domain.numbers)
    text = f"how many {domain.plural} are listed, and what is their average {_field_words(field)}?"
    return Question(text, ((names[f"{table}.stats"], {"field": field}),), ("count", "average"), "stats")


def ask_children(r: random.Random, world: World, table: str, names: dict[str, str]) -> Question:
    domain = DOMAINS[table]
    assert domain.parent is not None
    key, parent_table, noun = domain.parent
    parents = sorted({row[key] for row in world.rows(table)})
    parent = world.get(parent_table, r.choice(parents))
    assert parent is not None
    label = parent.get("name") or parent.get("title") or parent["id"]
    text = f"how many {domain.plural} does the {noun} '{label}' (id {parent['id']}) have? Which is listed first?"
    facts = ("total", f"results.0.{domain.name_field}")
    return Question(text, ((names[f"{table}.children"], {f"{noun}_id": parent["id"]}),), facts, "children")


def ask_list(r: random.Random, world: World, table: str, names: dict[str, str]) -> Question:
    domain = DOMAINS[table]
    if not domain.filters:
        return ask_about_row(r, world, table, names)
    field, _ = r.choice(domain.filters)
    value = r.choice(world.rows(table))[field]
    shown = str(value).lower() if isinstance(value, bool) else value
    args: dict[str, Any] = {field: shown}
    text = f"how many {domain.plural} have {_field_words(field)} {shown!s}?"
    facts: tuple[str, ...] = ("total",)
    template = "list.count"
    if domain.numbers:
        template = "list.sorted"
        by = domain.numbers[0]
        args.update(sort_by=by, order="desc")
        text = (
            f"among the {domain.plural} whose {_field_words(field)} is {shown!s}, how many are there and which "
            f"has the highest {_field_words(by)}?"
        )
        facts = ("total", f"results.0.{domain.name_field}")
    return Question(text, ((names[f"{table}.list"], args),), facts, template)


ASKERS = {"get": ask_about_row, "top": ask_top, "stats": ask_stats, "children": ask_children, "list": ask_list}

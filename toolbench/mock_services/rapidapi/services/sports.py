"""Sports tables: standings computed from the results, fixtures, a team's matches and one match."""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, Context
from toolbench.mock_services.rapidapi.services.shared import S, api, day_offset, p, row
from toolbench.mock_services.rapidapi.world import World


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
        day_offset(a["date"], -400, 400)
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

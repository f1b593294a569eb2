"""Favourites and votes, per API key: the only part of The Cat API that changes.

All state is plain JSON-like data, and two stores built from the same snapshot behave identically
(the basis of scoring a prediction against a reference). A record (a favourite or a vote) is never
changed once made, only added or removed, so snapshots share the records and copy only the lists
that hold them: a snapshot costs a few list copies, not a deep copy of every record.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import threading
from typing import Any

from toolbench.core.tasks import fixture_file

#: 2024-05-14 12:00:00 UTC, the clock of new favourites and votes.
DEFAULT_NOW = 1715688000


def timestamp(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def load_initial_account() -> dict[str, Any]:
    """The generated starting account: a user id, favourites and votes."""
    with open(fixture_file("catapi", "account.json"), encoding="utf-8") as handle:
        return json.load(handle)


class CatStore:
    """Accounts (by API key) with their favourites and votes, plus id counters and the RAND counter."""

    def __init__(self, accounts: dict[str, dict[str, Any]], now: int = DEFAULT_NOW, seed: int = 0):
        favourite_ids = [f["id"] for a in accounts.values() for f in a["favourites"]]
        vote_ids = [v["id"] for a in accounts.values() for v in a["votes"]]
        self.now = now
        self.lock = threading.Lock()  # the app holds it for each request (served fakes answer from threads)
        self.state: dict[str, Any] = {
            "accounts": copy.deepcopy(accounts),
            "next_favourite_id": max(favourite_ids, default=232400000) + 1,
            "next_vote_id": max(vote_ids, default=1160000) + 1,
            "rand_calls": 0,
            "seed": seed,
        }

    @classmethod
    def with_account(cls, api_key: str, account: dict[str, Any] | None = None, **kwargs: Any) -> CatStore:
        return cls({api_key: account if account is not None else load_initial_account()}, **kwargs)

    def snapshot(self) -> dict[str, Any]:
        """The state now, unchanged by what the store does later."""
        return _copy_containers(self.state)

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.state = _copy_containers(snapshot)

    def account(self, api_key: str | None) -> dict[str, Any] | None:
        return self.state["accounts"].get(api_key) if api_key else None

    def next_rand_call(self) -> int:
        """A counter that makes each RAND search draw a new, reproducible order."""
        self.state["rand_calls"] += 1
        return self.state["rand_calls"]

    def add_favourite(self, account: dict[str, Any], image_id: str, sub_id: str | None) -> dict[str, Any]:
        favourite = {
            "id": self.state["next_favourite_id"],
            "user_id": account["user_id"],
            "image_id": image_id,
            "sub_id": sub_id,
            "created_at": timestamp(self.now),
        }
        self.state["next_favourite_id"] += 1
        account["favourites"].append(favourite)
        return favourite

    def add_vote(
        self, account: dict[str, Any], image_id: str, sub_id: str | None, value: int, country: str
    ) -> dict[str, Any]:
        vote = {
            "id": self.state["next_vote_id"],
            "image_id": image_id,
            "sub_id": sub_id,
            "created_at": timestamp(self.now),
            "value": value,
            "country_code": country,
        }
        self.state["next_vote_id"] += 1
        account["votes"].append(vote)
        return vote


def _copy_containers(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with its accounts and their record lists copied and the (never changed) records shared."""
    accounts = {
        key: {**account, "favourites": list(account["favourites"]), "votes": list(account["votes"])}
        for key, account in state["accounts"].items()
    }
    return {**state, "accounts": accounts}

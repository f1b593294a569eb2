"""toolbench/CatAPI-v0: manage favourite cat pictures and votes with one The Cat API call written as curl."""

from __future__ import annotations

import json
from functools import cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolbench.core.curl_env import CurlProgramEnv, Execution, fields_f1
from toolbench.core.scoring import PRF, deep_equal, dict_f1
from toolbench.core.tasks import Task
from toolbench.core.transport import HttpRequest, Router
from toolbench.mock_services.catapi import DEMO_API_KEY, HOST, Catalogue, CatStore, create_app, load_initial_account
from toolbench.mock_services.http import with_state

API_DOCS = """# List the pictures saved in your favourites
curl -X GET 'https://api.thecatapi.com/v1/favourites'

Parameters:
sub_id: (optional) only the favourites saved under this sub-account id.
limit, page: (optional) page size and zero-based page number.
order: (optional) ASC (oldest first, the default) or DESC (newest first).

# Save the picture with id {image_id} in your favourites
curl -X POST 'https://api.thecatapi.com/v1/favourites' --data '{"image_id":"{image_id}"}'

Parameters:
image_id: (required) id of the picture.
sub_id: (optional) a sub-account id of your own choosing to file the favourite under.

# Remove the favourite with id {favourite_id} (the id the favourites list shows, not the picture id)
curl -X DELETE 'https://api.thecatapi.com/v1/favourites/{favourite_id}'

# List the votes you have cast
curl -X GET 'https://api.thecatapi.com/v1/votes'

Parameters:
sub_id: (optional) only the votes cast under this sub-account id.
limit, page: (optional) page size and zero-based page number.
order: (optional) ASC (oldest first, the default) or DESC (newest first).

# Vote on the picture with id {image_id}: value 1 is a vote up, -1 a vote down
curl -X POST 'https://api.thecatapi.com/v1/votes' --data '{"image_id":"{image_id}", "value":1}'

Parameters:
image_id: (required) id of the picture.
value: (required) 1 to vote up, -1 to vote down.
sub_id: (optional) a sub-account id to file the vote under.

# Delete the vote with id {vote_id}
curl -X DELETE 'https://api.thecatapi.com/v1/votes/{vote_id}'

# Search pictures
curl -X GET 'https://api.thecatapi.com/v1/images/search?limit={k}'

Parameters:
limit: (optional) how many pictures (1 by default, at most 100).
breed_ids: (optional) comma-separated breed ids, e.g. beng,abys.
category_ids: (optional) comma-separated category ids (see /v1/categories).
has_breeds: (optional) 1 to return only pictures with breed information.
mime_types: (optional) comma-separated jpg, png, gif.
order: (optional) RAND (the default), ASC or DESC; page: (optional) page number for ASC and DESC.

# List all cat breeds with their ids, origins and traits
curl -X GET 'https://api.thecatapi.com/v1/breeds'

Every call carries your API key in the x-api-key header; it is added for you.
"""


#: What a policy that knows only the kind of request writes: the collection's listing, or the call
#: with fixed values where one is required (a picture no task names, a vote up, ids the account
#: does not have).
FIXED_IMAGE = "gYGJ7wU1v"
FIXED_FAVOURITE = 232400000
FIXED_VOTE = 1160000


def _plain(request: HttpRequest) -> HttpRequest:
    """``request`` without its query: the collection's listing in its default order."""
    return HttpRequest(
        request.method, urlunsplit(urlsplit(request.url)._replace(query="")), request.headers, request.body
    )


@cache
def _catalogue() -> Catalogue:
    return Catalogue()


@cache
def _initial_account() -> dict[str, Any]:
    """Read once; every store deep-copies it, so no episode changes it."""
    return load_initial_account()


@cache
def _shared_app() -> Any:
    """One app per process; each env's requests name its own store (``with_state``)."""
    return create_app(None, _catalogue())


class CatAPIEnv(CurlProgramEnv):
    """Carry out a request about favourite cat pictures and votes with one call to a local The Cat API.

    ## Description
    The ToolBench The Cat API task (Xu et al. 2023): the agent reads a request ("save picture
    9ccXTANkb to my favourites", "show my last five votes") and writes the curl command for it.
    The six query categories are listing, adding and deleting favourites, and listing, casting and
    deleting votes. The API is a local Flask fake with the 67 real breeds, a generated picture
    library and an account whose favourites and votes start every episode in the same state.

    ## Action Space
    Free text (``UnicodeText``, up to 131,072 characters). The first line starting with ``curl``
    is the call. The ``x-api-key`` header and a JSON content type are added when the command lacks
    them, as the original harness does. Shell syntax, file options and other hosts are refused.

    ## Observation Space
    Text: the request after ``reset``; the response body (or an error message) after ``step``.

    ## Rewards
    The prediction and each reference run against fresh, identical state. Calls that change the
    account (add or delete a favourite, vote, delete a vote) are compared by the changes they made,
    so equivalent spellings of the same request score alike; read-only calls are compared by the
    top-level fields of their responses (dict F1, ToolBench's comparison, in ``precision``,
    ``recall`` and ``f1``). ``score``, the reward paid at the end of the episode, is that F1 without
    the listing entries the plain listing has at the same place (the n oldest favourites are the
    first n of every listing): a listing of the right collection earns nothing for them, and a
    listing whose entries are all such is right or wrong as a whole. ``info`` carries ``success``
    (F1 = 1), ``score``, ``executable``, ``error``, ``precision``, ``recall``, ``f1``. Records with
    ``compare_string_only`` (in the original files) compare canonical requests instead.

    ## Starting State
    The account's initial favourites and votes; a task drawn with the seeded RNG from the split
    (``test``: 100, ``demo``: 12, ``train``: 1,000 more of the seen templates, ``unseen``: 100 in
    sentence frames and id formats none of the others use) or named by ``options={"task_id": ...}``.

    ## Episode End
    ``mode="program"`` (the only mode): the episode terminates after one action.

    ## Arguments
    ``gym.make("toolbench/CatAPI-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None)``.
    """

    service_host = HOST
    api_key = DEMO_API_KEY
    generation_max_tokens = 128
    generation_top_k_api = 3

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._store = CatStore.with_account(DEMO_API_KEY, _initial_account())
        self._initial = self._store.snapshot()
        self._scratch = CatStore.with_account(DEMO_API_KEY, _initial_account())
        self._router = Router({HOST: with_state(_shared_app(), self._store)})
        self._scratch_router = Router({HOST: with_state(_shared_app(), self._scratch)})
        # A listing reference's entries that the plain listing has at the same place, by its URL.
        self._shared_fields: dict[str, frozenset[Any]] = self._task_set.derived((type(self), "shared fields"))

    def _begin(self, task: Any) -> str:
        self._store.restore(self._initial)
        return super()._begin(task)

    def _episode_router(self) -> Router:
        return self._router

    def _fresh_router(self) -> Router:
        self._scratch.restore(self._initial)
        return self._scratch_router

    def _snapshot(self, router: Router) -> Any:
        store = self._store if router is self._router else self._scratch
        return {
            key: {kind: account[kind] for kind in ("favourites", "votes")}
            for key, account in store.snapshot()["accounts"].items()
        }

    def _effects(self, before: Any, after: Any) -> dict[str, Any]:
        """What a call changed: ``{"favourites/<id>": record or "deleted", "votes/<id>": ...}``."""
        effects: dict[str, Any] = {}
        for key in sorted(set(before) | set(after)):
            for kind in ("favourites", "votes"):
                old = {r["id"]: r for r in before.get(key, {}).get(kind, [])}
                new = {r["id"]: r for r in after.get(key, {}).get(kind, [])}
                for record_id in sorted(old.keys() | new.keys()):
                    if old.get(record_id) != new.get(record_id):
                        effects[f"{kind}/{record_id}"] = new.get(record_id, "deleted")
        return effects

    def _prepare(self, request: HttpRequest) -> HttpRequest:
        request = request.with_default_header("x-api-key", self.api_key)
        return request.with_default_header("Content-Type", "application/json") if request.body else request

    def _compare(self, prediction: Execution, reference: Execution) -> PRF:
        if prediction.effects or reference.effects:
            return dict_f1(prediction.effects, reference.effects)
        return fields_f1(prediction, reference)

    def shared_fields(self, reference: Execution) -> frozenset[Any]:
        """The entries of a listing ``reference`` that the plain listing (no sub-account, order or page
        size) has at the same index: the n oldest favourites are the listing's first n whatever n is."""
        key = reference.request.url
        if key not in self._shared_fields:
            plain = self.execute(_plain(reference.request), self._fresh_router())
            theirs = plain.fields() if plain.ok else {}
            self._shared_fields[key] = frozenset(
                name for name, value in reference.fields().items() if name in theirs and deep_equal(value, theirs[name])
            )
        return self._shared_fields[key]

    def shared_parts_actions(self, task: Task) -> list[str]:
        """The task's method and collection with fixed values where the call needs one: the plain
        listing, a fixed picture saved or voted up, a favourite or vote id the account lacks."""
        request = self.parse_action(task.references[0]).request
        path = urlsplit(request.url).path.rstrip("/")
        collection = "/favourites" if "/favourites" in path else "/votes"
        base = f"https://{HOST}/v1{collection}"
        if request.method == "GET":
            return [f"curl -X GET '{base}'"]
        if request.method == "DELETE":
            return [f"curl -X DELETE '{base}/{FIXED_FAVOURITE if collection == '/favourites' else FIXED_VOTE}'"]
        body = {"image_id": FIXED_IMAGE, **({"value": 1} if collection == "/votes" else {})}
        return [f"curl -X POST '{base}' --data '{json.dumps(body)}'"]

    def _get_backend_state(self) -> Any:
        return self._store.snapshot()

    def _set_backend_state(self, state: Any) -> None:
        self._store.restore(state)

    def api_docs(self) -> str:
        return API_DOCS

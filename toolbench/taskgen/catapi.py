"""The Cat API world (image library, starting account) and its task sets.

Six query categories, as in ToolBench: list, add and delete favourites; list, cast and delete
votes. 100 test tasks and 2 demonstrations per category; ``train`` asks more of the same templates
(each with more phrasings), ``unseen`` the same categories in a grammar of its own (``catapi_unseen``).
"""

from __future__ import annotations

import csv
import functools
import json
import string
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolbench.core.curl import find_curl_command, parse_curl
from toolbench.core.tasks import fixture_file
from toolbench.core.transport import Router
from toolbench.mock_services.catapi import DEMO_API_KEY, HOST, Catalogue, CatStore, create_app
from toolbench.mock_services.catapi.store import DEFAULT_NOW, timestamp
from toolbench.mock_services.catapi.world import CATEGORIES, image_from_record
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    fresh,
    generator,
    jsonl,
    rng_for,
    split_maker,
    spread,
)

BASE = "https://api.thecatapi.com/v1"
#: The six categories are the benchmark's own and every split asks all of them: ``unseen`` holds out
#: sentence frames and the ways ids, counts, sub-accounts and votes are written (its template ids).
HELD_OUT_KEYS: tuple[str, ...] = ()
#: A task's difficulty: how many values its call sets (an id, a sub-account, a vote, an order, a count).
HAS_DIFFICULTY = True
#: Train's extra phrasings of the seen templates: a greeting before the request, thanks after it.
TRAIN_OPENERS = ["", "", "Hi! ", "Hello. ", "Quick favour: ", "Hey, "]
TRAIN_CLOSERS = ["", "", " Thanks!", " Thank you.", " Cheers."]
CATEGORY_NAMES = ["list_favourites", "add_favourite", "delete_favourite", "list_votes", "vote", "delete_vote"]
SUB_IDS = ["living-room-frame", "kids-tablet", "office-screen", "grandma-phone"]


# ------------------------------------------------------------------------------ world data
def generate_images() -> list[dict[str, Any]]:
    rng = rng_for("catapi", "images")
    with open(fixture_file("catapi", "breeds.csv"), encoding="utf-8", newline="") as handle:
        breed_ids = [row["id"] for row in csv.DictReader(handle)]
    used: set[str] = set()

    def new_id() -> str:
        while True:
            if rng.random() < 0.35:
                candidate = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(3))
            else:
                candidate = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(9))
            if candidate not in used:
                used.add(candidate)
                return candidate

    def image(breeds: list[str], categories: list[int]) -> dict[str, Any]:
        ext = rng.choices(["jpg", "png", "gif"], weights=[80, 12, 8])[0]
        width = rng.randrange(240, 1600, 4)
        height = int(width * rng.uniform(0.55, 1.5)) // 2 * 2
        return {
            "id": new_id(),
            "ext": ext,
            "width": width,
            "height": height,
            "breed_ids": breeds,
            "category_ids": categories,
        }

    images = [image([breed], []) for breed in breed_ids for _ in range(rng.randint(3, 7))]
    images += [image([], [cid]) for cid, _ in CATEGORIES for _ in range(rng.randint(10, 14))]
    images += [image([], []) for _ in range(240)]
    rng.shuffle(images)
    return images


def generate_account(images: list[dict[str, Any]]) -> dict[str, Any]:
    rng = rng_for("catapi", "account")
    plain = [image["id"] for image in images]
    favourites, votes = [], []
    favourite_id, vote_id = 232401017, 1160452
    for image_id in rng.sample(plain, 14):
        favourite_id += rng.randint(1, 40)
        favourites.append(
            {
                "id": favourite_id,
                "user_id": "tbx7q2",
                "image_id": image_id,
                "sub_id": rng.choice([None, None, *SUB_IDS]),
                "created_at": timestamp(DEFAULT_NOW - rng.randint(2, 400) * 86400 // 7 * 7 + favourite_id % 86400),
            }
        )
    for image_id in rng.sample(plain, 16):
        vote_id += rng.randint(1, 90)
        votes.append(
            {
                "id": vote_id,
                "image_id": image_id,
                "sub_id": rng.choice([None, None, *SUB_IDS]),
                "created_at": timestamp(DEFAULT_NOW - rng.randint(2, 400) * 86400 + vote_id % 86400),
                "value": rng.choice([1, 1, -1]),
                "country_code": "US",
            }
        )
    favourites.sort(key=lambda f: f["id"])
    votes.sort(key=lambda v: v["id"])
    return {"user_id": "tbx7q2", "favourites": favourites, "votes": votes}


# ------------------------------------------------------------------------------ tasks
def _curl(method: str, path: str, body: dict[str, Any] | None = None) -> str:
    command = f"curl -X {method} '{BASE}{path}'"
    if body is not None:
        command += " --data '" + json.dumps(body, separators=(", ", ":")) + "'"
    return command


class _TaskMaker:
    def __init__(self, split: str, account: dict[str, Any], images: list[dict[str, Any]]):
        self.rng = rng_for("catapi", "tasks", split)
        self.account = account
        self.image_ids = [image["id"] for image in images]

    def sub(self) -> str:
        return self.rng.choice(SUB_IDS)

    def fresh_image(self, sub_id: str | None) -> str:
        taken = {f["image_id"] for f in self.account["favourites"] if f["sub_id"] == sub_id}
        return self.rng.choice([i for i in self.image_ids if i not in taken])

    def make(self, category: str) -> tuple[str, str, str]:
        """A request of ``category``, its reference call and its template id (the category, the request's
        form and the index of the phrasing chosen)."""
        self._template = ""
        prompt, reference = self._make(category)
        return prompt, reference, f"{category}/{self._template}"

    def phrase(self, family: str, phrasings: list[str], draw: bool = True) -> str:
        """``rng.choice(phrasings)`` (the same draw; none for a single fixed phrasing), noting the
        template: the request's form (``family``) and the phrasing's index."""
        text = self.rng.choice(phrasings) if draw else phrasings[0]
        self._template = f"{family}-{phrasings.index(text)}"
        return text

    def _make(self, category: str) -> tuple[str, str]:
        rng = self.rng
        if category == "list_favourites":
            form = rng.randrange(5)
            if form == 0:
                return self.phrase(
                    "all",
                    [
                        "Show me every cat picture I have saved as a favourite.",
                        "Which pictures are in my favourites right now?",
                        "List all of my favourite cat images.",
                    ],
                ), _curl("GET", "/favourites")
            if form == 1:
                sub = self.sub()
                return (
                    self.phrase(
                        "sub",
                        [
                            f"List the favourites filed under the sub-account '{sub}'.",
                            f"Which favourites did I save for the sub id {sub}?",
                        ],
                    ),
                    _curl("GET", f"/favourites?sub_id={sub}"),
                )
            n = rng.randint(2, 6)
            if form in (2, 3):
                return (
                    self.phrase(
                        "newest",
                        [
                            f"What are the {n} pictures I most recently added to my favourites?",
                            f"Show my {n} newest favourites, newest first.",
                        ],
                    ),
                    _curl("GET", f"/favourites?order=DESC&limit={n}"),
                )
            return (
                self.phrase(
                    "oldest",
                    [
                        f"Give me the first {n} entries of my favourites list, oldest first.",
                        f"Show only the {n} oldest favourites I have.",
                    ],
                ),
                _curl("GET", f"/favourites?limit={n}"),
            )
        if category == "add_favourite":
            if rng.random() < 0.6:
                image = self.fresh_image(None)
                return (
                    self.phrase(
                        "plain",
                        [
                            f"Save the picture {image} to my favourites.",
                            f"I love image {image}; add it to my favourite cats.",
                            f"Please favourite the cat photo with id {image}.",
                        ],
                    ),
                    _curl("POST", "/favourites", {"image_id": image}),
                )
            sub = self.sub()
            image = self.fresh_image(sub)
            return (
                self.phrase(
                    "sub",
                    [
                        f"Add picture {image} to the favourites of sub-account '{sub}'.",
                        f"Bookmark cat image {image} as a favourite under the sub id {sub}.",
                    ],
                ),
                _curl("POST", "/favourites", {"image_id": image, "sub_id": sub}),
            )
        if category == "delete_favourite":
            favourite = rng.choice(self.account["favourites"])["id"]
            return (
                self.phrase(
                    "id",
                    [
                        f"Remove favourite number {favourite} from my list.",
                        f"Delete the favourite with id {favourite}.",
                        f"I no longer want favourite {favourite}; take it off my favourites.",
                    ],
                ),
                _curl("DELETE", f"/favourites/{favourite}"),
            )
        if category == "list_votes":
            form = rng.randrange(4)
            if form == 0:
                return (
                    self.phrase("all", ["Show all the votes I have cast.", "List every vote on my account."]),
                    _curl("GET", "/votes"),
                )
            if form == 1:
                sub = self.sub()
                return (
                    self.phrase(
                        "sub",
                        [
                            f"List the votes recorded for sub-account '{sub}'.",
                            f"Which votes were cast under the sub id {sub}?",
                        ],
                    ),
                    _curl("GET", f"/votes?sub_id={sub}"),
                )
            n = rng.randint(2, 6)
            if form == 2:
                return (
                    self.phrase(
                        "newest", [f"What were my last {n} votes?", f"Show the {n} most recent votes, newest first."]
                    ),
                    _curl("GET", f"/votes?order=DESC&limit={n}"),
                )
            return (
                self.phrase("oldest", [f"Show the first {n} votes I ever cast.", f"List my {n} oldest votes."]),
                _curl("GET", f"/votes?limit={n}"),
            )
        if category == "vote":
            image = rng.choice(self.image_ids)
            value = rng.choice([1, -1])
            if rng.random() < 0.65:
                text = (
                    self.phrase(
                        "up",
                        [
                            f"Vote up the picture {image}.",
                            f"Give image {image} a thumbs up.",
                            f"I like cat picture {image}; upvote it.",
                        ],
                    )
                    if value == 1
                    else self.phrase(
                        "down",
                        [
                            f"Vote down the picture {image}.",
                            f"Give image {image} a thumbs down.",
                            f"Downvote cat photo {image}, please.",
                        ],
                    )
                )
                return text, _curl("POST", "/votes", {"image_id": image, "value": value})
            sub = self.sub()
            text = self.phrase(
                "sub-up" if value == 1 else "sub-down",
                [
                    f"Upvote image {image} on behalf of the sub-account '{sub}'."
                    if value == 1
                    else f"Cast a down vote on picture {image} for the sub id {sub}."
                ],
                draw=False,
            )
            return text, _curl("POST", "/votes", {"image_id": image, "sub_id": sub, "value": value})
        if category == "delete_vote":
            vote = rng.choice(self.account["votes"])["id"]
            return (
                self.phrase(
                    "id",
                    [
                        f"Delete my vote {vote}.",
                        f"Take back the vote with id {vote}.",
                        f"Remove vote number {vote} from my history.",
                    ],
                ),
                _curl("DELETE", f"/votes/{vote}"),
            )
        raise ValueError(category)


def generate_tasks(
    split: str,
    total: int,
    account: dict[str, Any],
    images: list[dict[str, Any]],
    avoid: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """``total`` tasks; none answered by a reference in ``avoid`` (a demonstration that is a test
    task's answer would hand it to a model that copies its prompt's examples)."""
    maker = _TaskMaker(split, account, images)
    records = []
    for index, category in enumerate(spread(total, CATEGORY_NAMES)):
        prompt, reference, template = maker.make(category)
        while reference in avoid:
            prompt, reference, template = maker.make(category)
        records.append(
            {
                "id": f"catapi-{split}-{index:04d}",
                "category": category,
                "prompt": prompt,
                "completion": [reference],
                "compare_string_only": False,
                "template": template,
            }
        )
    return records


def check_references(records: list[dict[str, Any]], images: list[dict[str, Any]], account: dict[str, Any]) -> None:
    """Every reference must succeed against the starting account (a generator bug otherwise)."""
    store = CatStore.with_account(DEMO_API_KEY, account)
    initial = store.snapshot()
    catalogue = Catalogue(images=[image_from_record(image) for image in images])
    router = Router({HOST: create_app(store, catalogue)})
    for record in records:
        for reference in record["completion"]:
            store.restore(initial)
            request = parse_curl(find_curl_command(reference)).request
            request = request.with_default_header("x-api-key", DEMO_API_KEY)
            if request.body:
                request = request.with_default_header("Content-Type", "application/json")
            response = router.send(request)
            if not response.ok:
                raise AssertionError(f"{record['id']}: reference fails with {response.status}: {response.text}")


def difficulty(reference: str) -> int:
    """How many values the reference call sets: its query parameters, its body's fields, an id in its path."""
    request = parse_curl(find_curl_command(reference)).request
    url = urlsplit(request.url)
    in_path = 1 if url.path.rstrip("/").rsplit("/", 1)[-1].isdigit() else 0
    return len(parse_qsl(url.query)) + len(json.loads(request.body) if request.body else {}) + in_path


def _candidates(split: str, seed: int) -> Iterator[tuple[str, str, str, str]]:
    """Endless (prompt, reference, template, category) of ``split``: train's from the seen templates
    with a greeting or thanks around some, unseen's from the unseen grammar. Neither names the picture
    the env's shared-parts policy uses."""
    from toolbench.envs.catapi import FIXED_IMAGE
    from toolbench.taskgen.catapi_unseen import UnseenMaker

    images = generate_images()
    account = generate_account(images)
    maker = _TaskMaker(f"{split}/{seed}", account, images)
    maker.image_ids = [image for image in maker.image_ids if image != FIXED_IMAGE]
    unseen = UnseenMaker(maker.rng, account, maker.image_ids, SUB_IDS, _curl)
    rng = maker.rng
    while True:
        for category in CATEGORY_NAMES:
            if split == "unseen":
                yield (*unseen.make(category), category)
                continue
            prompt, reference, template = maker.make(category)
            yield rng.choice(TRAIN_OPENERS) + prompt + rng.choice(TRAIN_CLOSERS), reference, template, category


@functools.cache
def _held(split: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The prompts a ``split`` task may not equal or nearly equal (test's and demo's, and for train the
    shipped unseen split's), and the answers it may not have (for train, test's: the account is small,
    and a policy that memorises train must not answer test)."""
    images = generate_images()
    account = generate_account(images)
    test = generate_tasks("test", 100, account, images)
    answers = frozenset(reference for record in test for reference in record["completion"])
    demo = generate_tasks("demo", 2 * len(CATEGORY_NAMES), account, images, avoid=answers)
    prompts = [r["prompt"] for r in (*test, *demo)]
    if split != "train":
        return tuple(prompts), frozenset()
    prompts += [r["prompt"] for r in make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)]
    return tuple(prompts), answers


@split_maker("catapi")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` train tasks (the seen templates) or unseen tasks (the unseen grammar), none of them a
    test, demo or (for train) shipped unseen prompt, nor a near duplicate of one; no train task has a
    test task's answer."""
    held, answers = _held(split)
    chosen = fresh(_candidates(split, seed), size, held, batch=12, keep=lambda candidate: candidate[1] not in answers)
    return [
        {
            "id": f"catapi-{split}-{index:04d}",
            "category": category,
            "prompt": prompt,
            "completion": [reference],
            "compare_string_only": False,
            "template": template,
            "difficulty": difficulty(reference),
        }
        for index, (prompt, reference, template, category) in enumerate(chosen)
    ]


@aligner("catapi")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    images = generate_images()
    return generate_tasks(f"align-{seed}", count, generate_account(images), images)


@generator("catapi")
def generate() -> Files:
    images = generate_images()
    account = generate_account(images)
    files = {"images.jsonl": jsonl(images), "account.json": json.dumps(account, indent=1) + "\n"}
    test = generate_tasks("test", 100, account, images)
    answers = frozenset(reference for record in test for reference in record["completion"])
    demo = generate_tasks("demo", 2 * len(CATEGORY_NAMES), account, images, avoid=answers)
    grown = [(split, make_split(split, SHIPPED_SIZES[split], SHIPPED_SEED)) for split in ("train", "unseen")]
    for split, records in (("test", test), ("demo", demo), *grown):
        check_references(records, images, account)
        files[f"{split}.jsonl"] = jsonl(records)
    return files

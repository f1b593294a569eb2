"""The Cat API fake speaks the real API's protocol."""

import csv
import json

import pytest

from toolbench.core.transport import HttpRequest, Router
from toolbench.mock_services.catapi import DEMO_API_KEY, HOST, Catalogue, CatStore, create_app, load_initial_account
from toolbench.mock_services.catapi.app import AUTH_ERROR, DUPLICATE_FAVOURITE

KEY = DEMO_API_KEY
OTHER_KEY = "live_other"


@pytest.fixture(scope="module")
def catalogue():
    return Catalogue()


@pytest.fixture
def store():
    return CatStore({KEY: load_initial_account(), OTHER_KEY: {"user_id": "other", "favourites": [], "votes": []}})


@pytest.fixture
def call(store, catalogue):
    router = Router({HOST: create_app(store, catalogue)})

    def call(method, path, body=None, key=KEY, content_type="application/json"):
        headers = (("x-api-key", key),) if key else ()
        data = b""
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers += (("Content-Type", content_type),)
        return router.send(HttpRequest(method, f"https://{HOST}/v1{path}", headers, data))

    return call


def test_the_67_real_breeds(call, refdata):
    breeds = call("GET", "/breeds").json()
    assert len(breeds) == 67
    expected = json.loads(
        (refdata / "sambanova_toolbench/extracted/evaluator/the_cat_api_evaluator.BREED_MAP.json").read_text()
    )
    assert {b["name"]: b["id"] for b in breeds} == expected


def test_breed_objects_have_the_real_fields(call):
    breed = call("GET", "/breeds/beng").json()
    for field in (
        "weight",
        "id",
        "name",
        "temperament",
        "origin",
        "country_code",
        "description",
        "life_span",
        "indoor",
        "adaptability",
        "affection_level",
        "hairless",
        "wikipedia_url",
        "reference_image_id",
    ):
        assert field in breed
    assert breed["name"] == "Bengal" and breed["origin"] == "United States"
    assert call("GET", "/breeds/sphy").json()["hairless"] == 1
    assert [b["id"] for b in call("GET", "/breeds/search?q=rex").json()] == ["crex", "drex", "srex"]
    assert len(call("GET", "/breeds?limit=10&page=6").json()) == 7
    assert call("GET", "/breeds/nope").status == 400


def test_image_search_filters(call):
    (one,) = call("GET", "/images/search").json()
    assert set(one) >= {"id", "url", "width", "height"} and one["url"].startswith("https://cdn2.thecatapi.com/images/")
    bengals = call("GET", "/images/search?breed_ids=beng&limit=50").json()
    assert bengals and all(any(b["id"] == "beng" for b in image["breeds"]) for image in bengals)
    hats = call("GET", "/images/search?category_ids=1&limit=50").json()
    assert hats and all({"id": 1, "name": "hats"} in image["categories"] for image in hats)
    gifs = call("GET", "/images/search?mime_types=gif&limit=100").json()
    assert gifs and all(image["url"].endswith(".gif") for image in gifs)
    with_breeds = call("GET", "/images/search?has_breeds=1&limit=30").json()
    assert len(with_breeds) == 30 and all(image["breeds"] for image in with_breeds)


def test_image_search_limits_and_order(call):
    assert len(call("GET", "/images/search?limit=25").json()) == 25
    assert len(call("GET", "/images/search?limit=25", key=None).json()) == 10  # no key: at most 10
    page0 = call("GET", "/images/search?order=ASC&limit=5&page=0")
    page1 = call("GET", "/images/search?order=ASC&limit=5&page=1").json()
    assert page0.header("pagination-count") == str(len(Catalogue().images))
    assert [i["id"] for i in page0.json()] + [i["id"] for i in page1] == [
        i["id"] for i in call("GET", "/images/search?order=ASC&limit=10").json()
    ]
    descending = call("GET", "/images/search?order=DESC&limit=3").json()
    assert descending[0]["id"] == Catalogue().images[-1].id
    assert call("GET", "/images/search?order=SIDEWAYS").status == 400
    assert call("GET", "/images/search?limit=abc").text == '"limit" must be a number'


def test_random_order_is_seeded(catalogue):
    def draws(seed):
        store = CatStore({KEY: load_initial_account()}, seed=seed)
        router = Router({HOST: create_app(store, catalogue)})
        return [router.send(HttpRequest("GET", f"https://{HOST}/v1/images/search?limit=3")).json() for _ in range(3)]

    first = draws(0)
    assert first == draws(0)
    assert first[0] != first[1]  # each call draws a new order
    assert first != draws(1)


def test_image_lookup(call, catalogue):
    image = catalogue.images[0]
    body = call("GET", f"/images/{image.id}").json()
    assert body["id"] == image.id and "breeds" in body
    missing = call("GET", "/images/nope123")
    assert missing.status == 400 and missing.text == "Couldn't find an image matching the passed 'id' of nope123"


def test_favourites_lifecycle(call, catalogue):
    before = call("GET", "/favourites").json()
    assert before and set(before[0]) == {"id", "user_id", "image_id", "sub_id", "created_at", "image"}
    image_id = next(i.id for i in catalogue.images if i.id not in {f["image_id"] for f in before})
    created = call("POST", "/favourites", {"image_id": image_id, "sub_id": "me"})
    assert created.status == 200 and created.json() == {"message": "SUCCESS", "id": created.json()["id"]}
    duplicate = call("POST", "/favourites", {"image_id": image_id, "sub_id": "me"})
    assert duplicate.status == 400 and duplicate.text == DUPLICATE_FAVOURITE
    favourite_id = created.json()["id"]
    assert call("GET", f"/favourites/{favourite_id}").json()["image"]["id"] == image_id
    assert [f["id"] for f in call("GET", "/favourites?sub_id=me").json()] == [favourite_id]
    assert call("GET", "/favourites?order=DESC&limit=1").json()[0]["id"] == favourite_id
    assert call("DELETE", f"/favourites/{favourite_id}").json() == {"message": "SUCCESS"}
    again = call("DELETE", f"/favourites/{favourite_id}")
    assert again.status == 400 and again.text == "INVALID_ACCOUNT"
    assert call("GET", "/favourites").json() == before


def test_unknown_images_can_be_saved_like_on_the_real_service(call):
    created = call("POST", "/favourites", {"image_id": "nope000"})
    assert created.status == 200 and created.json()["message"] == "SUCCESS"
    listed = call("GET", "/favourites?order=DESC&limit=1").json()[0]
    assert listed["image_id"] == "nope000" and listed["image"] == {}


def test_deeply_nested_json_is_a_client_error(call):
    response = call("POST", "/votes", b"[" * 100_000)
    assert response.status == 400


@pytest.mark.parametrize(
    "body, message",
    [
        ({"sub_id": "x"}, '"image_id" is required'),
        ({"image_id": 5}, '"image_id" must be a string'),
        (b"{broken", "Unexpected token in JSON at position 1"),
    ],
)
def test_favourite_validation(call, body, message):
    response = call("POST", "/favourites", body)
    assert response.status == 400 and response.text == message


def test_votes_lifecycle(call, catalogue):
    image_id = catalogue.images[3].id
    created = call("POST", "/votes", {"image_id": image_id, "value": -1})
    assert created.status == 201
    body = created.json()
    assert body == {
        "message": "SUCCESS",
        "id": body["id"],
        "image_id": image_id,
        "sub_id": None,
        "value": -1,
        "country_code": "US",
    }
    listed = call("GET", "/votes?order=DESC&limit=1").json()[0]
    assert listed["id"] == body["id"] and listed["image"]["id"] == image_id and listed["value"] == -1
    assert call("POST", "/votes", {"image_id": image_id}).text == '"value" is required'
    assert call("POST", "/votes", {"image_id": image_id, "value": "up"}).text == '"value" must be a number'
    assert call("POST", "/votes", {"image_id": image_id, "value": 0.5}).text == '"value" must be an integer'
    assert call("POST", "/votes", b'{"image_id": "%s", "value": -1.0}' % image_id.encode()).json()["value"] == -1
    assert call("DELETE", f"/votes/{body['id']}").json() == {"message": "SUCCESS"}
    assert call("GET", f"/votes/{body['id']}").status == 404


def test_a_trailing_slash_reaches_the_same_route(call):
    assert call("GET", "/favourites/").json() == call("GET", "/favourites").json()
    assert call("POST", "/votes/", {"image_id": "abc", "value": 1}).status == 201


def test_a_lone_surrogate_is_stored_and_sent_back_escaped(call):
    # JSON may carry "\ud83d" (half a UTF-16 pair); the reply must still encode, then and later.
    body = b'{"image_id": "abc", "sub_id": "\\ud83d", "value": 1}'
    created = call("POST", "/votes", body)
    assert created.status == 201 and created.json()["sub_id"] == "\ud83d"
    everything = call("GET", "/votes")
    assert everything.status == 200 and everything.json()[-1]["sub_id"] == "\ud83d"


def test_form_encoded_bodies_work_too(call, catalogue):
    form = f"image_id={catalogue.images[5].id}&value=1".encode()
    assert call("POST", "/votes", form, content_type="application/x-www-form-urlencoded").status == 201


def test_accounts_need_a_key_and_are_separate(call, catalogue):
    for method, path in [("GET", "/favourites"), ("POST", "/favourites"), ("GET", "/votes"), ("DELETE", "/votes/1")]:
        response = call(method, path, {"image_id": "x"} if method == "POST" else None, key=None)
        assert response.status == 401 and response.text == AUTH_ERROR
    assert call("GET", "/favourites", key="live_unknown").status == 401
    assert call("GET", "/favourites", key=OTHER_KEY).json() == []
    call("POST", "/favourites", {"image_id": catalogue.images[0].id}, key=OTHER_KEY)
    assert len(call("GET", "/favourites", key=OTHER_KEY).json()) == 1
    mine = call("GET", "/favourites").json()
    assert all(f["user_id"] != "other" for f in mine)


def test_api_key_query_parameter(store, catalogue):
    router = Router({HOST: create_app(store, catalogue)})
    response = router.send(HttpRequest("GET", f"https://{HOST}/v1/favourites?api_key={KEY}"))
    assert response.status == 200 and response.json()


def test_categories(call):
    assert {"id": 1, "name": "hats"} in call("GET", "/categories").json()


def test_breed_data_file_is_well_formed():
    from toolbench.core.tasks import fixture_file

    with open(fixture_file("catapi", "breeds.csv"), encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len({row["id"] for row in rows}) == 67 and all(len(row["country_code"]) == 2 for row in rows)


def test_a_json_number_of_thousands_of_digits_is_a_400(call):
    response = call("POST", "/votes", ('{"image_id": "a", "value": ' + "1" * 5000 + "}").encode())
    assert response.status == 400 and b"too many digits" in response.body


def test_ids_a_client_stores_are_bounded(call):
    response = call("POST", "/favourites", {"image_id": "x" * 5_000_000})
    assert response.status == 400 and b"less than or equal to 255" in response.body
    assert call("POST", "/votes", {"image_id": "abc", "sub_id": "s" * 256, "value": 1}).status == 400
    assert call("POST", "/favourites", {"image_id": "a" * 255}).status == 200


def test_snapshots_are_unchanged_by_what_the_store_does_later(call, store):
    """Snapshots share the records and copy their lists: adding and deleting must not reach them."""
    before = store.snapshot()
    frozen = json.dumps(before, sort_keys=True)
    assert call("POST", "/favourites", {"image_id": "snap1"}).status == 200
    favourite_id = store.account(KEY)["favourites"][0]["id"]
    assert call("DELETE", f"/favourites/{favourite_id}").status == 200
    assert call("POST", "/votes", {"image_id": "snap1", "value": 1}).status in (200, 201)
    assert json.dumps(before, sort_keys=True) == frozen
    store.restore(before)
    assert json.dumps(store.snapshot(), sort_keys=True) == frozen
    assert call("POST", "/favourites", {"image_id": "snap2"}).status == 200
    assert json.dumps(before, sort_keys=True) == frozen  # restoring copied the lists again


def test_episodes_never_change_the_starting_state():
    import gymnasium as gym

    env = gym.make("toolbench/CatAPI-v0").unwrapped
    frozen = json.dumps(env._initial, sort_keys=True)
    for task in env.tasks:
        env.reset(options={"task_id": task.id})
        env.step(task.references[0])
    assert json.dumps(env._initial, sort_keys=True) == frozen


def test_requests_are_answered_one_at_a_time(store, catalogue):
    """Served fakes answer from several threads: the store's lock is held for each request, so a
    check and the change it guards (no duplicate favourite, the next id) happen together."""
    import threading

    router = Router({HOST: create_app(store, catalogue)})
    request = HttpRequest(
        "POST",
        f"https://{HOST}/v1/favourites",
        (("x-api-key", KEY), ("Content-Type", "application/json")),
        json.dumps({"image_id": "locked"}).encode(),
    )
    answers = []
    with store.lock:
        sender = threading.Thread(target=lambda: answers.append(router.send(request)))
        sender.start()
        sender.join(timeout=0.3)
        assert sender.is_alive() and not answers  # waits for the lock
    sender.join(timeout=5)
    assert [answer.status for answer in answers] == [200]

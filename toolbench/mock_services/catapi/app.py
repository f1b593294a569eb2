"""The Cat API fake: images, breeds, categories, favourites and votes.

Bodies, status codes and error texts follow the real service: JSON on success, plain-text errors
such as ``AUTHENTICATION_ERROR - you need to send your API Key as the 'x-api-key' header``,
``DUPLICATE_FAVOURITE - favourites are unique for account + image_id + sub_id``, ``INVALID_ACCOUNT``
and Joi-style validation messages (``"image_id" is required``).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from toolbench.core.seeding import stable_uniform
from toolbench.mock_services.catapi.store import CatStore
from toolbench.mock_services.catapi.world import Catalogue
from toolbench.mock_services.http import STATE_KEY, json_response, new_app, parse_int, serialized, text_response

HOST = "api.thecatapi.com"
#: The key the envs and ``toolbench serve catapi`` accept by default (shaped like a real "live_" key).
DEMO_API_KEY = "live_tbgym6f0c2d9e4b7a1c8f3e5d2b9a6c4e1f7d3b8a5c2e9f6d1b4a7c0e3f8d5b2"
AUTH_ERROR = "AUTHENTICATION_ERROR - you need to send your API Key as the 'x-api-key' header"
DUPLICATE_FAVOURITE = "DUPLICATE_FAVOURITE - favourites are unique for account + image_id + sub_id"
MAX_ID_CHARS = 255  # of an image_id or sub_id a client may store
MAX_LIMIT_WITHOUT_KEY = 10
MAX_LIMIT = 100
COUNTRY_CODE = "US"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(store: CatStore | None = None, catalogue: Catalogue | None = None) -> Flask:
    """A Cat API-compatible app over ``store`` (mutable state) and ``catalogue`` (read-only data).
    A request that names a store under ``STATE_KEY`` (``with_state``) works on that store instead,
    so one app serves the stores of every env in a process."""
    catalogue = catalogue or Catalogue()

    def current_store() -> CatStore:
        found = request.environ.get(STATE_KEY, store)
        if found is None:
            raise ApiError(500, "no store to answer from")
        return found

    app = new_app(__name__)
    app.url_map.strict_slashes = False  # "/v1/votes/" is "/v1/votes", as with Express's default routing

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Response:
        return text_response(error.message, error.status)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        return text_response(error.name, error.code or 500)

    def api_key() -> str | None:
        return request.headers.get("x-api-key") or request.args.get("api_key")

    def account() -> dict[str, Any]:
        found = current_store().account(api_key())
        if found is None:
            raise ApiError(401, AUTH_ERROR)
        return found

    def integer(name: str, default: int, low: int = 0, high: int | None = None) -> int:
        raw = request.args.get(name)
        if raw is None or raw == "":
            return default
        value = parse_int(raw)
        if value is None:
            raise ApiError(400, f'"{name}" must be a number')
        if value < low:
            raise ApiError(400, f'"{name}" must be greater than or equal to {low}')
        return min(value, high) if high is not None else value

    def body() -> dict[str, Any]:
        raw = request.get_data(as_text=True)
        if not raw.strip():
            return {}
        if request.mimetype == "application/x-www-form-urlencoded" and not raw.lstrip().startswith("{"):
            return request.form.to_dict()
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ApiError(400, f"Unexpected token in JSON at position {exc.pos}") from None
        except RecursionError:
            raise ApiError(400, "request entity too deeply nested") from None
        except ValueError:  # an integer of more than 4,300 digits: Python will not read it as text
            raise ApiError(400, "Unexpected number in JSON: too many digits") from None
        if not isinstance(parsed, dict):
            raise ApiError(400, '"value" must be of type object')
        return parsed

    def page(items: list[Any], default_limit: int, max_limit: int) -> tuple[list[Any], dict[str, str]]:
        limit = integer("limit", default_limit, low=1, high=max_limit)
        number = integer("page", 0)
        headers = {"pagination-count": str(len(items)), "pagination-page": str(number), "pagination-limit": str(limit)}
        return items[number * limit : (number + 1) * limit], headers

    def order() -> str:
        value = request.args.get("order", "RAND").upper()
        if value not in ("RAND", "ASC", "DESC"):
            raise ApiError(400, '"order" must be one of [ASC, DESC, RAND]')
        return value

    def csv_arg(name: str) -> list[str]:
        return [part.strip() for part in request.args.get(name, "").split(",") if part.strip()]

    # ------------------------------------------------------------------ images, breeds, categories
    @app.get("/v1/images/search")
    def search_images() -> Response:
        has_key = current_store().account(api_key()) is not None
        images = list(catalogue.images)
        if request.args.get("has_breeds", "").lower() in ("1", "true"):
            images = [image for image in images if image.breed_ids]
        breed_ids = set(csv_arg("breed_ids"))
        if breed_ids:
            images = [image for image in images if breed_ids & set(image.breed_ids)]
        category_ids = set()
        for part in csv_arg("category_ids"):
            category_id = parse_int(part)
            if category_id is None:
                raise ApiError(400, '"category_ids" must be a number')
            category_ids.add(category_id)
        if category_ids:
            images = [image for image in images if category_ids & set(image.category_ids)]
        mime_types = {"jpg" if m.lower() == "jpeg" else m.lower() for m in csv_arg("mime_types")}
        if mime_types:
            images = [image for image in images if image.mime_type in mime_types]
        size = request.args.get("size", "med").lower()
        if size not in ("thumb", "small", "med", "full"):
            raise ApiError(400, '"size" must be one of [thumb, small, med, full]')
        sort = order()
        if sort == "RAND":
            call = current_store().next_rand_call()
            seed = current_store().state["seed"]
            images.sort(key=lambda image: stable_uniform("rand", seed, call, image.id))
        elif sort == "DESC":
            images.reverse()
        max_limit = MAX_LIMIT if has_key else MAX_LIMIT_WITHOUT_KEY
        if sort == "RAND":
            limit = integer("limit", 1, low=1, high=max_limit)
            chosen, headers = images[:limit], {}
        else:
            chosen, headers = page(images, 1, max_limit)
        return json_response([catalogue.image_json(image) for image in chosen], headers=headers)

    @app.get("/v1/images/<image_id>")
    def get_image(image_id: str) -> Response:
        image = catalogue.images_by_id.get(image_id)
        if image is None:
            raise ApiError(400, f"Couldn't find an image matching the passed 'id' of {image_id}")
        return json_response(catalogue.image_json(image))

    @app.get("/v1/breeds")
    def list_breeds() -> Response:
        breeds = list(catalogue.breeds)
        if "limit" in request.args or "page" in request.args:
            breeds, headers = page(breeds, 10, len(breeds))
            return json_response(breeds, headers=headers)
        return json_response(breeds)

    @app.get("/v1/breeds/search")
    def search_breeds() -> Response:
        query = request.args.get("q", "").strip().lower()
        found = [b["id"] for b in catalogue.breeds if query and query in b["name"].lower()]
        return json_response([catalogue.embedded_breeds_by_id[breed_id] for breed_id in found])

    @app.get("/v1/breeds/<breed_id>")
    def get_breed(breed_id: str) -> Response:
        breed = catalogue.breeds_by_id.get(breed_id)
        if breed is None:
            raise ApiError(400, "INVALID_DATA")
        return json_response(breed)

    @app.get("/v1/categories")
    def list_categories() -> Response:
        return json_response(list(catalogue.categories))

    # ------------------------------------------------------------------ favourites and votes
    def image_ref(image_id: str) -> dict[str, str]:
        image = catalogue.images_by_id.get(image_id)
        return {"id": image_id, "url": image.url} if image else {}

    def listing(records: list[dict[str, Any]]) -> Response:
        sub_id = request.args.get("sub_id")
        if sub_id is not None:
            records = [r for r in records if r.get("sub_id") == sub_id]
        records = sorted(records, key=lambda r: r["id"], reverse=request.args.get("order", "ASC").upper() == "DESC")
        chosen, headers = page(records, MAX_LIMIT, MAX_LIMIT)
        return json_response([{**r, "image": image_ref(r["image_id"])} for r in chosen], headers=headers)

    def find(records: list[dict[str, Any]], record_id: str) -> dict[str, Any] | None:
        return next((r for r in records if str(r["id"]) == record_id), None)

    def required_image_id(data: dict[str, Any]) -> str:
        image_id = data.get("image_id")
        if image_id is None:
            raise ApiError(400, '"image_id" is required')
        if not isinstance(image_id, str):
            raise ApiError(400, '"image_id" must be a string')
        return bounded("image_id", image_id)  # like the real service, any id is accepted ("image": {} if unknown)

    def bounded(name: str, text: str) -> str:
        """Stored text stays small: every listing serves it back (bounded memory and responses)."""
        if len(text) > MAX_ID_CHARS:
            raise ApiError(400, f'"{name}" length must be less than or equal to {MAX_ID_CHARS} characters long')
        return text

    def optional_sub_id(data: dict[str, Any]) -> str | None:
        sub_id = data.get("sub_id")
        if sub_id is not None and not isinstance(sub_id, str):
            raise ApiError(400, '"sub_id" must be a string')
        return sub_id if sub_id is None else bounded("sub_id", sub_id)

    @app.get("/v1/favourites")
    def list_favourites() -> Response:
        return listing(account()["favourites"])

    @app.get("/v1/favourites/<favourite_id>")
    def get_favourite(favourite_id: str) -> Response:
        favourite = find(account()["favourites"], favourite_id)
        if favourite is None:
            raise ApiError(404, "NOT_FOUND")
        return json_response({**favourite, "image": image_ref(favourite["image_id"])})

    @app.post("/v1/favourites")
    def add_favourite() -> Response:
        owner = account()
        data = body()
        image_id, sub_id = required_image_id(data), optional_sub_id(data)
        if any(f["image_id"] == image_id and f.get("sub_id") == sub_id for f in owner["favourites"]):
            raise ApiError(400, DUPLICATE_FAVOURITE)
        favourite = current_store().add_favourite(owner, image_id, sub_id)
        return json_response({"message": "SUCCESS", "id": favourite["id"]})

    @app.delete("/v1/favourites/<favourite_id>")
    def delete_favourite(favourite_id: str) -> Response:
        owner = account()
        favourite = find(owner["favourites"], favourite_id)
        if favourite is None:
            raise ApiError(400, "INVALID_ACCOUNT")
        owner["favourites"].remove(favourite)
        return json_response({"message": "SUCCESS"})

    @app.get("/v1/votes")
    def list_votes() -> Response:
        return listing(account()["votes"])

    @app.get("/v1/votes/<vote_id>")
    def get_vote(vote_id: str) -> Response:
        vote = find(account()["votes"], vote_id)
        if vote is None:
            raise ApiError(404, "NOT_FOUND")
        return json_response({**vote, "image": image_ref(vote["image_id"])})

    @app.post("/v1/votes")
    def add_vote() -> Response:
        owner = account()
        data = body()
        image_id, sub_id = required_image_id(data), optional_sub_id(data)
        if "value" not in data:
            raise ApiError(400, '"value" is required')
        value = data["value"]
        if isinstance(value, str) and parse_int(value) is not None:
            value = parse_int(value)  # form-encoded bodies carry numbers as text
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON -1.0 and -1e0 are the number -1
        if isinstance(value, float):
            raise ApiError(400, '"value" must be an integer')
        if isinstance(value, bool) or not isinstance(value, int):
            raise ApiError(400, '"value" must be a number')
        vote = current_store().add_vote(owner, image_id, sub_id, value, COUNTRY_CODE)
        fields = ("id", "image_id", "sub_id", "value", "country_code")
        return json_response({"message": "SUCCESS", **{key: vote[key] for key in fields}}, 201)

    @app.delete("/v1/votes/<vote_id>")
    def delete_vote(vote_id: str) -> Response:
        owner = account()
        vote = find(owner["votes"], vote_id)
        if vote is None:
            raise ApiError(400, "INVALID_ACCOUNT")
        owner["votes"].remove(vote)
        return json_response({"message": "SUCCESS"})

    def lock_of(environ: dict[str, Any]) -> Any:
        found = environ.get(STATE_KEY, store)
        return found.lock if found is not None else contextlib.nullcontext()  # no store: the view answers 500

    app.wsgi_app = serialized(app.wsgi_app, lock_of)  # type: ignore[method-assign]
    return app

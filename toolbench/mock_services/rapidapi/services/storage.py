"""Storage and links: files uploaded, read back and deleted; short links expanded, with their stats.

Both keep their records in the session's state.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import S, api, keep, p, stored


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
        return stored(ctx, "files", a["file_id"], "file")

    def listing(ctx: Context, a: dict[str, Any]) -> Any:
        files = ctx.state.get("files", {})
        return {
            "count": len(files),
            "files": [{"id": f["id"], "name": f["name"], "size": f["size"]} for f in files.values()],
        }

    def delete(ctx: Context, a: dict[str, Any]) -> Any:
        entry = stored(ctx, "files", a["file_id"], "file")
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


def links_service(style: int) -> list[Api]:
    def shorten(ctx: Context, a: dict[str, Any]) -> Any:
        url = a["url"].strip()
        if not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", url):
            raise ApiError(400, "Invalid value for parameter 'url': not an http(s) URL")
        code = hashlib.sha256(url.encode()).hexdigest()[:7]
        if code not in ctx.state.get("links", {}):
            keep(ctx, "links", code, {"code": code, "url": url, "clicks": 0})
        return {"code": code, "short_url": f"https://sho.rt/{code}", "url": url}

    def expand(ctx: Context, a: dict[str, Any]) -> Any:
        link = stored(ctx, "links", a["code"].strip().rsplit("/", 1)[-1], "link")
        link["clicks"] += 1
        return {"code": link["code"], "url": link["url"]}

    def stats(ctx: Context, a: dict[str, Any]) -> Any:
        return dict(stored(ctx, "links", a["code"].strip().rsplit("/", 1)[-1], "link"))

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

"""Images: what the world's images show (labels, faces, text) and the size and address of a resized copy."""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, p


def vision_service(style: int) -> list[Api]:
    def image(ctx: Context, key: str) -> dict[str, Any]:
        key = key.strip()
        found = ctx.world.get("images", key) or next((i for i in ctx.world.rows("images") if i["url"] == key), None)
        if found is None:
            raise ApiError(404, f"Image '{key[:80]}' not found")
        return found

    def labels(ctx: Context, a: dict[str, Any]) -> Any:
        found = image(ctx, a["image"])
        return {
            "image": found["id"],
            "labels": [{"name": n, "confidence": round(0.7 + 0.1 * k, 2)} for k, n in enumerate(found["labels"])],
        }

    def faces(ctx: Context, a: dict[str, Any]) -> Any:
        return {"image": image(ctx, a["image"])["id"], "faces": image(ctx, a["image"])["faces"]}

    def ocr(ctx: Context, a: dict[str, Any]) -> Any:
        return {"image": image(ctx, a["image"])["id"], "text": image(ctx, a["image"])["text"]}

    def resize(ctx: Context, a: dict[str, Any]) -> Any:
        found = image(ctx, a["image"])
        width = int(bounded(a["width"], 1, 10000, "width"))
        height = round(found["height"] * width / found["width"])
        return {"image": found["id"], "width": width, "height": height, "url": f"{found['url']}?w={width}"}

    target = p("image", S, "image id or URL", "img0001")
    return [
        api(
            "vision.labels",
            ("Label Image", "detectLabels", "labels"),
            style,
            "POST",
            "/labels",
            "What an image shows.",
            labels,
            (target,),
        ),
        api(
            "vision.faces",
            ("Detect Faces", "countFaces", "faces"),
            style,
            "POST",
            "/faces",
            "How many faces an image has.",
            faces,
            (target,),
        ),
        api(
            "vision.ocr",
            ("Read Text", "extractText", "ocr"),
            style,
            "POST",
            "/ocr",
            "Text written in an image.",
            ocr,
            (target,),
        ),
        api(
            "vision.resize",
            ("Resize Image", "resizeImage", "resize"),
            style,
            "GET",
            "/resize",
            "A resized copy's size and URL (the aspect ratio is kept).",
            resize,
            (target, p("width", N, "pixels", 320)),
        ),
    ]

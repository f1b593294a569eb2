"""The unseen Cat API requests: the six categories in a grammar no demo, test or train task uses.

Seen requests name one picture, favourite or vote by its bare id after "picture", "image" or "id",
counts as digits, sub-accounts as "sub-account 'x'" or "sub id x", and votes as up or down. Here a
request names another record of the same kind beside the one it is about, writes favourite and
vote ids with thousands separators and picture ids in backticks, counts in words, sub-accounts as
devices, and votes as +1 or -1 or a liking. Every reference is built from the drawn values.
"""

from __future__ import annotations

from typing import Any

from toolbench.taskgen.numbers import number_words


def _grouped(number: int) -> str:
    """``232401096`` as ``232,401,096``."""
    return f"{number:,}"


class UnseenMaker:
    """Unseen requests over the starting account (its records) and the picture library."""

    def __init__(self, rng: Any, account: dict[str, Any], image_ids: list[str], sub_ids: list[str], curl: Any):
        self.rng = rng
        self.account = account
        self.image_ids = image_ids
        self.sub_ids = sub_ids
        self.curl = curl

    def make(self, category: str) -> tuple[str, str, str]:
        """A request of ``category``: its text, reference call and template id."""
        kind = "favourites" if category in ("list_favourites", "add_favourite", "delete_favourite") else "votes"
        if category.startswith("list_"):
            return self._listing(category, kind)
        if category == "add_favourite":
            return self._add()
        if category == "vote":
            return self._vote()
        return self._delete(category, kind)

    def _pick(self, category: str, form: str, frames: list[str]) -> tuple[str, str]:
        frame = self.rng.randrange(len(frames))
        return frames[frame], f"unseen/{category}/{form}-{frame}"

    def _listing(self, category: str, kind: str) -> tuple[str, str, str]:
        rng = self.rng
        noun = "saved pictures" if kind == "favourites" else "ratings"
        other = "ratings" if kind == "favourites" else "saved pictures"
        form = rng.choice(["all", "sub", "newest", "newest", "oldest", "oldest"])
        if form == "all":
            text, template = self._pick(
                category,
                form,
                [
                    f"Never mind my {other}. Dump every one of my {noun}, the whole lot.",
                    f"The complete list of my {noun}, please; I'm not asking about {other}.",
                ],
            )
            return text, self.curl("GET", f"/{kind}"), template
        if form == "sub":
            # A sub-account named as a device, beside another one it is not.
            sub, not_sub = rng.sample(self.sub_ids, 2)
            frames = [
                f"Only the {noun} tied to the {sub} device (not {not_sub}).",
                f"Pull up what the {sub} device has among my {noun}; {not_sub} doesn't matter.",
            ]
            text, template = self._pick(category, form, frames)
            return text, self.curl("GET", f"/{kind}?sub_id={sub}"), template
        n = rng.randint(2, 6)
        words = number_words(n)
        if form == "newest":
            frames = [
                f"The freshest {words} of my {noun}, latest first.",
                f"Out of all my {noun}, just the {words} I made most lately, starting from the latest.",
            ]
            query = f"?order=DESC&limit={n}"
        else:
            frames = [
                f"The earliest {words} of my {noun}, in the order I made them.",
                f"Go back to the very beginning of my {noun} and show {words} of them, earliest first.",
            ]
            query = f"?limit={n}"
        text, template = self._pick(category, form, frames)
        return text, self.curl("GET", f"/{kind}{query}"), template

    def _two_images(self, sub_id: str | None) -> tuple[str, str]:
        """A picture the account has not saved under ``sub_id``, and another one to name beside it."""
        taken = {f["image_id"] for f in self.account["favourites"] if f["sub_id"] == sub_id}
        image = self.rng.choice([i for i in self.image_ids if i not in taken])
        other = self.rng.choice([i for i in self.image_ids if i != image])
        return image, other

    def _add(self) -> tuple[str, str, str]:
        if self.rng.random() < 0.6:
            image, other = self._two_images(None)
            text, template = self._pick(
                "add_favourite",
                "plain",
                [
                    f"Skip `{other}`, it's blurry. `{image}` is the keeper: into my favourites it goes.",
                    f"Between `{other}` and `{image}`, I want the second one kept among my favourites.",
                ],
            )
            return text, self.curl("POST", "/favourites", {"image_id": image}), template
        sub = self.rng.choice(self.sub_ids)
        image, other = self._two_images(sub)
        text, template = self._pick(
            "add_favourite",
            "sub",
            [
                f"On the {sub} device, keep `{image}` as a favourite (not `{other}`).",
                f"`{other}` can wait. Pin `{image}` to the favourites of the {sub} device.",
            ],
        )
        return text, self.curl("POST", "/favourites", {"image_id": image, "sub_id": sub}), template

    def _vote(self) -> tuple[str, str, str]:
        rng = self.rng
        image, other = self._two_images(None)
        value = rng.choice([1, -1])
        sign = "+1" if value == 1 else "-1"
        feeling = "adore" if value == 1 else "can't stand"
        sub = rng.choice(self.sub_ids) if rng.random() < 0.35 else None
        frames = [
            f"Put a {sign} on `{image}`; leave `{other}` alone.",
            f"I {feeling} `{image}`. Record that as my rating ({sign}), and nothing on `{other}`.",
        ]
        text, template = self._pick("vote", "plain", frames)
        body: dict[str, Any] = {"image_id": image, "value": value}
        if sub is not None:
            text = f"{text} File it from the {sub} device."
            template = template.replace("/plain-", "/device-")
            body = {"image_id": image, "sub_id": sub, "value": value}
        return text, self.curl("POST", "/votes", body), template

    def _delete(self, category: str, kind: str) -> tuple[str, str, str]:
        target, keep = self.rng.sample(self.account[kind], 2)
        noun = "favourite" if kind == "favourites" else "rating"
        frames = [
            f"Keep {noun} {_grouped(keep['id'])}, but get rid of {noun} {_grouped(target['id'])}.",
            f"{noun.capitalize()} no. {_grouped(target['id'])} has to go; {_grouped(keep['id'])} stays.",
        ]
        text, template = self._pick(category, "id", frames)
        return text, self.curl("DELETE", f"/{kind}/{target['id']}"), template

"""Codes and security checks: hashes, encodings and ROT13; a site's status, certificate and blacklist
entries, a password's strength and an IP address.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import re
from datetime import date
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import S, api, p
from toolbench.mock_services.rapidapi.world import TODAY


def codes_service(style: int) -> list[Api]:
    def digest(ctx: Context, a: dict[str, Any]) -> Any:
        algorithm = a.get("algorithm", "sha256")
        return {"algorithm": algorithm, "hash": hashlib.new(algorithm, a["text"].encode()).hexdigest()}

    def encode(ctx: Context, a: dict[str, Any]) -> Any:
        return {"encoded": base64.b64encode(a["text"].encode()).decode()}

    def decode(ctx: Context, a: dict[str, Any]) -> Any:
        try:
            return {"decoded": base64.b64decode(a["data"], validate=True).decode()}
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise ApiError(400, "Invalid value for parameter 'data': not base64 of UTF-8 text") from None

    def rot13(ctx: Context, a: dict[str, Any]) -> Any:
        return {"result": codecs.encode(a["text"], "rot13")}

    return [
        api(
            "codes.hash",
            ("Hash Text", "hashText", "hash"),
            style,
            "POST",
            "/hash",
            "A hash of a text.",
            digest,
            (p("text", S, "the text", "hello"),),
            (p("algorithm", "ENUM", "md5, sha1 or sha256", "sha256", ("md5", "sha1", "sha256")),),
        ),
        api(
            "codes.encode",
            ("Base64 Encode", "base64Encode", "encode"),
            style,
            "POST",
            "/encode",
            "Base64 of a text's UTF-8 bytes.",
            encode,
            (p("text", S, "the text", "hello"),),
        ),
        api(
            "codes.decode",
            ("Base64 Decode", "base64Decode", "decode"),
            style,
            "POST",
            "/decode",
            "The text of base64 data.",
            decode,
            (p("data", S, "base64", "aGVsbG8="),),
        ),
        api(
            "codes.rot13",
            ("ROT13", "rot13Text", "rot13"),
            style,
            "POST",
            "/rot13",
            "A text in ROT13.",
            rot13,
            (p("text", S, "the text", "hello"),),
        ),
    ]


def security_service(style: int) -> list[Api]:
    def domain_row(ctx: Context, name: str) -> dict[str, Any]:
        found = ctx.world.get(
            "domains", name.strip().lower().removeprefix("https://").removeprefix("http://").strip("/")
        )
        if found is None:
            raise ApiError(404, f"Domain '{name[:80]}' is not registered")
        return found

    def status(ctx: Context, a: dict[str, Any]) -> Any:
        found = domain_row(ctx, a["domain"])
        return {
            "domain": found["id"],
            "status": found["status"],
            "response_ms": found["response_ms"],
            "ip": found["ip"],
        }

    def ssl(ctx: Context, a: dict[str, Any]) -> Any:
        found = domain_row(ctx, a["domain"])
        left = (date.fromisoformat(found["ssl_expires"]) - TODAY).days
        return {"domain": found["id"], "expires": found["ssl_expires"], "days_left": left, "valid": left > 0}

    def blacklist(ctx: Context, a: dict[str, Any]) -> Any:
        found = domain_row(ctx, a["domain"])
        return {"domain": found["id"], "blacklisted": found["blacklisted"]}

    def password(ctx: Context, a: dict[str, Any]) -> Any:
        text = a["password"]
        classes = sum(bool(re.search(pattern, text)) for pattern in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
        score = min(4, (len(text) >= 8) + (len(text) >= 12) + max(0, classes - 1))
        return {
            "length": len(text),
            "score": score,
            "strength": ("very weak", "weak", "fair", "strong", "very strong")[score],
        }

    def ip_lookup(ctx: Context, a: dict[str, Any]) -> Any:
        hosted = [d["id"] for d in ctx.world.rows("domains") if d["ip"] == a["ip"].strip()]
        if not hosted:
            raise ApiError(404, f"No records for IP '{a['ip'][:40]}'")
        return {"ip": a["ip"].strip(), "domains": hosted}

    domain = p("domain", S, "domain name", "secretkingdom.com")
    return [
        api(
            "security.status",
            ("Domain Status", "checkStatus", "uptime"),
            style,
            "GET",
            "/status",
            "Whether a site is up, and how fast it answers.",
            status,
            (domain,),
        ),
        api(
            "security.ssl",
            ("SSL Check", "checkCertificate", "ssl"),
            style,
            "GET",
            "/ssl",
            "When a domain's certificate expires.",
            ssl,
            (domain,),
        ),
        api(
            "security.blacklist",
            ("Blacklist Check", "checkBlacklist", "reputation"),
            style,
            "GET",
            "/blacklist",
            "Whether a domain is on a blocklist.",
            blacklist,
            (domain,),
        ),
        api(
            "security.password",
            ("Password Strength", "ratePassword", "password"),
            style,
            "POST",
            "/password",
            "A password's strength from 0 to 4.",
            password,
            (p("password", S, "the password", "hunter2"),),
        ),
        api(
            "security.ip",
            ("IP Lookup", "lookupIp", "ip"),
            style,
            "GET",
            "/ip",
            "Domains hosted at an IP address.",
            ip_lookup,
            (p("ip", S, "IPv4 address", "199.126.190.32"),),
        ),
    ]

"""Messaging: email and SMS sent and their status read back, address and number checks, chat rooms.

Messages and chat rooms are session records: the POST APIs write them, their GET partners read them.
"""

from __future__ import annotations

import math
import re
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import MAX_RECORDS, S, api, keep, p, stored

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)+[A-Za-z]{2,}")
DISPOSABLE = frozenset(("tempmail.dev", "throwaway.io", "mailnull.net"))


def _phone_country(ctx: Context, number: str) -> dict[str, Any] | None:
    digits = "+" + re.sub(r"\D", "", number)
    codes = sorted(ctx.world.rows("countries"), key=lambda c: -len(c["calling_code"]))
    return next((c for c in codes if digits.startswith(c["calling_code"])), None) if 8 <= len(digits) <= 16 else None


def messaging_service(style: int) -> list[Api]:
    def validate_email(ctx: Context, a: dict[str, Any]) -> Any:
        email = a["email"].strip()
        valid = bool(_EMAIL.fullmatch(email))
        domain = email.rsplit("@", 1)[-1].lower() if valid else None
        return {"email": email, "valid": valid, "domain": domain, "disposable": domain in DISPOSABLE}

    def send_email(ctx: Context, a: dict[str, Any]) -> Any:
        if not _EMAIL.fullmatch(a["to"].strip()):
            raise ApiError(400, "Invalid value for parameter 'to': not an email address")
        number = ctx.counter("email")
        message = {"id": f"msg-{number:05d}", "to": a["to"].strip(), "subject": a["subject"], "status": "queued"}
        keep(ctx, "emails", message["id"], message)
        return message

    def email_status(ctx: Context, a: dict[str, Any]) -> Any:
        message = stored(ctx, "emails", a["message_id"], "message")
        return {**message, "status": "delivered"}

    def send_sms(ctx: Context, a: dict[str, Any]) -> Any:
        country = _phone_country(ctx, a["to"])
        if country is None:
            raise ApiError(400, "Invalid value for parameter 'to': not a phone number with a country code")
        segments = max(1, math.ceil(len(a["message"]) / 160))
        number = ctx.counter("sms")
        sms = {
            "id": f"SM{number:06d}",
            "to": a["to"],
            "country": country["id"],
            "segments": segments,
            "cost_usd": round(0.0075 * segments, 4),
            "status": "sent",
        }
        keep(ctx, "sms", sms["id"], sms)
        return sms

    def sms_status(ctx: Context, a: dict[str, Any]) -> Any:
        return {**stored(ctx, "sms", a["sms_id"], "message"), "status": "delivered"}

    def validate_phone(ctx: Context, a: dict[str, Any]) -> Any:
        country = _phone_country(ctx, a["number"])
        return {"number": a["number"], "valid": country is not None, "country": country["name"] if country else None}

    return [
        api(
            "messaging.validate_email",
            ("Validate Email", "verifyEmail", "email check"),
            style,
            "GET",
            "/email/verify",
            "Whether an address is well formed and not disposable.",
            validate_email,
            (p("email", S, "the address", "ada@example.com"),),
        ),
        api(
            "messaging.send_email",
            ("Send Email", "sendEmail", "email send"),
            style,
            "POST",
            "/email/send",
            "Queues an email; returns its id.",
            send_email,
            (p("to", S, "recipient", "ada@example.com"), p("subject", S, "subject", "Hello")),
            (p("body", S, "text", ""),),
        ),
        api(
            "messaging.email_status",
            ("Email Status", "getEmailStatus", "email status"),
            style,
            "GET",
            "/email/status",
            "Delivery status of a sent email.",
            email_status,
            (p("message_id", S, "id from Send Email", "msg-00001"),),
        ),
        api(
            "messaging.send_sms",
            ("Send SMS", "sendSms", "sms send"),
            style,
            "POST",
            "/sms/send",
            "Sends a text message; returns its id, segments and cost.",
            send_sms,
            (p("to", S, "phone number with country code", "+441234567890"), p("message", S, "text", "Hi")),
        ),
        api(
            "messaging.sms_status",
            ("SMS Status", "getSmsStatus", "sms status"),
            style,
            "GET",
            "/sms/status",
            "Delivery status of a sent SMS.",
            sms_status,
            (p("sms_id", S, "id from Send SMS", "SM000001"),),
        ),
        api(
            "messaging.validate_phone",
            ("Validate Phone", "verifyPhone", "phone check"),
            style,
            "GET",
            "/phone/verify",
            "Whether a phone number is valid, and its country.",
            validate_phone,
            (p("number", S, "phone number", "+33612345678"),),
        ),
    ]


def chat_service(style: int) -> list[Api]:
    def create(ctx: Context, a: dict[str, Any]) -> Any:
        channel = {"id": f"C{ctx.counter('channel'):04d}", "name": a["name"], "messages": []}
        keep(ctx, "channels", channel["id"], channel)
        return {"id": channel["id"], "name": channel["name"]}

    def post(ctx: Context, a: dict[str, Any]) -> Any:
        channel = stored(ctx, "channels", a["channel_id"], "channel")
        message = {"ts": len(channel["messages"]) + 1, "text": a["text"]}
        if len(channel["messages"]) >= MAX_RECORDS:
            raise ApiError(507, f"Channel {channel['id']} is full ({MAX_RECORDS} messages)")
        channel["messages"].append(message)
        return {"channel_id": channel["id"], **message}

    def history(ctx: Context, a: dict[str, Any]) -> Any:
        channel = stored(ctx, "channels", a["channel_id"], "channel")
        return {"channel_id": channel["id"], "count": len(channel["messages"]), "messages": channel["messages"][-20:]}

    channel_id = p("channel_id", S, "id from Create Channel", "C0001")
    return [
        api(
            "chat.create",
            ("Create Channel", "createChannel", "channel new"),
            style,
            "POST",
            "/channels",
            "Opens a channel.",
            create,
            (p("name", S, "channel name", "team"),),
        ),
        api(
            "chat.post",
            ("Post Message", "postMessage", "say"),
            style,
            "POST",
            "/messages",
            "Posts to a channel.",
            post,
            (channel_id, p("text", S, "message", "hello")),
        ),
        api(
            "chat.history",
            ("Channel History", "getMessages", "history"),
            style,
            "GET",
            "/messages",
            "The latest messages of a channel.",
            history,
            (channel_id,),
        ),
    ]

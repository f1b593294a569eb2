"""Commerce: payments and refunds, reward points, carts and their orders, and an ad campaign's figures.

Payments, points and carts are session records: the POST APIs write them, their GET partners read them.
"""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import HISTORY_KEPT, N, S, api, bounded, keep, p, row, stored


def payments_service(style: int) -> list[Api]:
    def create(ctx: Context, a: dict[str, Any]) -> Any:
        amount = bounded(a["amount"], 0.5, 1e6, "amount")
        currency = row(ctx.world, "currencies", a.get("currency", "USD"), "currency")["id"]
        payment = {
            "id": f"pay_{ctx.counter('payment'):05d}",
            "amount": amount,
            "currency": currency,
            "description": a.get("description", ""),
            "status": "succeeded",
            "refunded": 0,
        }
        keep(ctx, "payments", payment["id"], payment)
        return payment

    def get(ctx: Context, a: dict[str, Any]) -> Any:
        return stored(ctx, "payments", a["payment_id"], "payment")

    def refund(ctx: Context, a: dict[str, Any]) -> Any:
        payment = stored(ctx, "payments", a["payment_id"], "payment")
        if payment["status"] == "refunded":
            raise ApiError(409, f"Payment {payment['id']} is already refunded")
        payment.update(status="refunded", refunded=payment["amount"])
        return payment

    def listing(ctx: Context, a: dict[str, Any]) -> Any:
        payments = list(ctx.state.get("payments", {}).values())
        return {"count": len(payments), "payments": payments}

    payment_id = p("payment_id", S, "id from Create Payment", "pay_00001")
    return [
        api(
            "payments.create",
            ("Create Payment", "createCharge", "charge"),
            style,
            "POST",
            "/payments",
            "Charges an amount.",
            create,
            (p("amount", N, "amount", 25),),
            (p("currency", S, "ISO code", "USD"), p("description", S, "what it is for", "")),
        ),
        api(
            "payments.get",
            ("Get Payment", "retrievePayment", "payment"),
            style,
            "GET",
            "/payments/{payment_id}",
            "One payment.",
            get,
            (payment_id,),
        ),
        api(
            "payments.refund",
            ("Refund Payment", "refundCharge", "refund"),
            style,
            "POST",
            "/refunds",
            "Refunds a payment in full.",
            refund,
            (payment_id,),
        ),
        api(
            "payments.list",
            ("List Payments", "listCharges", "payments"),
            style,
            "GET",
            "/payments",
            "Every payment of this session.",
            listing,
        ),
    ]


def rewards_service(style: int) -> list[Api]:
    def account(ctx: Context, user: str) -> dict[str, Any]:
        name = user.strip().lower()
        if name not in ctx.state.get("points", {}):
            keep(ctx, "points", name, {"balance": 0, "history": []})
        return ctx.state["points"][name]

    def add(ctx: Context, a: dict[str, Any]) -> Any:
        points = int(bounded(a["points"], 1, 1e6, "points"))
        entry = account(ctx, a["user"])
        entry["balance"] += points
        entry["history"].append({"change": points, "reason": a.get("reason", "")})
        del entry["history"][:-HISTORY_KEPT]
        return {"user": a["user"].strip().lower(), "balance": entry["balance"]}

    def balance(ctx: Context, a: dict[str, Any]) -> Any:
        return {"user": a["user"].strip().lower(), "balance": account(ctx, a["user"])["balance"]}

    def redeem(ctx: Context, a: dict[str, Any]) -> Any:
        points = int(bounded(a["points"], 1, 1e6, "points"))
        entry = account(ctx, a["user"])
        if entry["balance"] < points:
            raise ApiError(402, f"Insufficient points: balance {entry['balance']}, asked {points}")
        entry["balance"] -= points
        entry["history"].append({"change": -points, "reason": "redeemed"})
        del entry["history"][:-HISTORY_KEPT]
        return {"user": a["user"].strip().lower(), "balance": entry["balance"]}

    user = p("user", S, "user name", "ada")
    return [
        api(
            "rewards.add",
            ("Add Points", "creditPoints", "earn"),
            style,
            "POST",
            "/points/add",
            "Adds points.",
            add,
            (user, p("points", N, "how many", 100)),
            (p("reason", S, "why", ""),),
        ),
        api(
            "rewards.balance",
            ("Points Balance", "getBalance", "balance"),
            style,
            "GET",
            "/points",
            "A user's points.",
            balance,
            (user,),
        ),
        api(
            "rewards.redeem",
            ("Redeem Points", "debitPoints", "redeem"),
            style,
            "POST",
            "/points/redeem",
            "Spends points.",
            redeem,
            (user, p("points", N, "how many", 50)),
        ),
    ]


def cart_service(style: int) -> list[Api]:
    def cart(ctx: Context) -> dict[str, Any]:
        return ctx.state.setdefault("cart", {})

    def add(ctx: Context, a: dict[str, Any]) -> Any:
        product = row(ctx.world, "products", a["product_id"], "product")
        if not product["in_stock"]:
            raise ApiError(409, f"Product {product['id']} is out of stock")
        quantity = int(bounded(a.get("quantity", 1), 1, 99, "quantity"))
        items = cart(ctx)
        items[product["id"]] = items.get(product["id"], 0) + quantity
        return view(ctx, {})

    def view(ctx: Context, a: dict[str, Any]) -> Any:
        lines = []
        for product_id, quantity in cart(ctx).items():
            product = ctx.world.get("products", product_id) or {}
            lines.append(
                {
                    "product_id": product_id,
                    "name": product.get("name"),
                    "quantity": quantity,
                    "subtotal": round(product.get("price_usd", 0) * quantity, 2),
                }
            )
        return {"items": lines, "total_usd": round(sum(line["subtotal"] for line in lines), 2)}

    def checkout(ctx: Context, a: dict[str, Any]) -> Any:
        current = view(ctx, {})
        if not current["items"]:
            raise ApiError(400, "The cart is empty")
        order = {"order_id": f"ORD-{ctx.counter('order'):05d}", **current, "status": "placed"}
        keep(ctx, "orders", order["order_id"], order)
        ctx.state["cart"] = {}
        return order

    def order(ctx: Context, a: dict[str, Any]) -> Any:
        return stored(ctx, "orders", a["order_id"], "order")

    return [
        api(
            "cart.add",
            ("Add To Cart", "addCartItem", "cart add"),
            style,
            "POST",
            "/cart/items",
            "Puts a product in the cart.",
            add,
            (p("product_id", S, "product id", "B0000001"),),
            (p("quantity", N, "1 to 99", 1),),
        ),
        api("cart.view", ("View Cart", "getCart", "cart"), style, "GET", "/cart", "The cart and its total.", view),
        api(
            "cart.checkout",
            ("Checkout", "placeOrder", "checkout"),
            style,
            "POST",
            "/orders",
            "Turns the cart into an order.",
            checkout,
        ),
        api(
            "cart.order",
            ("Order Details", "getOrder", "order"),
            style,
            "GET",
            "/orders/{order_id}",
            "One order.",
            order,
            (p("order_id", S, "id from Checkout", "ORD-00001"),),
        ),
    ]


def ads_service(style: int) -> list[Api]:
    def performance(ctx: Context, a: dict[str, Any]) -> Any:
        campaign = row(ctx.world, "campaigns", a["campaign_id"], "campaign")
        clicks, shown, spent = campaign["clicks"], campaign["impressions"], campaign["budget_usd"]
        return {
            "campaign_id": campaign["id"],
            "ctr_percent": round(clicks / shown * 100, 2),
            "cpc_usd": round(spent / clicks, 2) if clicks else None,
            "cpm_usd": round(spent / shown * 1000, 2),
        }

    return [
        api(
            "ads.performance",
            ("Campaign Performance", "getCampaignKpis", "kpis"),
            style,
            "GET",
            "/performance",
            "Click-through rate, cost per click and per thousand views.",
            performance,
            (p("campaign_id", S, "campaign id", "ad0001"),),
        ),
    ]

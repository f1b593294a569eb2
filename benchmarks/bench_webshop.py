"""WebShop: scripted episodes (the test goals' expert actions) in steps per second through the env,
next to the floor, the same actions on the shop alone (page logic and text, no env); and search
latency with catalogs of 1,000 and 100,000 products.

Targets: at least 1,000 steps per second at 1,000 products; a search under 10 ms at 100,000.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from toolbench.envs.webshop import _generated_products
from toolbench.mock_services.webshop import Goal, Session, Shop

ROUNDS = 3
QUERIES = (
    "high speed usb flash drive 32 gb",
    "gluten free snack bars",
    "women's running shoes size 8",
    "wooden bookshelf with doors",
    "long lasting lipstick",
    "wireless earbuds with charging case",
    "queen size bed frame",
    "organic green tea",
)


def shop_floor(env: Any, tasks: list[Any]) -> Callable[[], None]:
    """One pass of the floor: each task's expert actions (the lines of its reference) on the env's
    shop alone, on a fresh session: the shop's page logic and each page's text, no env."""
    shop = env.shop
    plays = [(task.get("goal"), [line for line in task.references[0].splitlines() if line.strip()]) for task in tasks]

    def floor() -> None:
        for goal, actions in plays:
            session = Session(goal=Goal.from_record(goal))
            for action in actions:
                shop.act(session, action)
                shop.page(session).simple()

    return floor


def episodes() -> dict[str, Any]:
    env = gym.make("toolbench/WebShop-v0").unwrapped
    plays = [(task, env.oracle_actions(task)) for task in env.tasks]
    steps = ROUNDS * sum(len(actions) for _, actions in plays)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for task, actions in plays:
            env.reset(options={"task_id": task.id})
            for action in actions:
                _, reward, *_ = env.step(action)
            assert reward == 1.0, task.id
    env_rate = steps / (time.perf_counter() - started)
    floor = shop_floor(env, env.tasks)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        floor()
    floor_rate = steps / (time.perf_counter() - started)
    return {"steps": steps, "env_steps_per_s": round(env_rate), "shop_only_steps_per_s": round(floor_rate)}


def search_latency(count: int) -> dict[str, Any]:
    started = time.perf_counter()
    products = _generated_products(count)
    shop = Shop(products)
    built = time.perf_counter() - started
    times = []
    for _ in range(5):
        for query in QUERIES:
            started = time.perf_counter()
            shop.engine.search(query)
            times.append(time.perf_counter() - started)
    return {
        "products": count,
        "build_s": round(built, 1),
        "median_ms": round(statistics.median(times) * 1000, 2),
        "max_ms": round(max(times) * 1000, 2),
    }


def main() -> dict[str, Any]:
    played = episodes()
    print(
        f"WebShop scripted episodes: {played['env_steps_per_s']} steps/s through the env "
        f"(the shop alone: {played['shop_only_steps_per_s']}/s; target 1,000)"
    )
    searches = [search_latency(count) for count in (1_000, 100_000)]
    for row in searches:
        print(
            f"WebShop search over {row['products']:,} products: median {row['median_ms']} ms, "
            f"max {row['max_ms']} ms (catalog and index built in {row['build_s']} s; target under 10 ms at 100,000)"
        )
    return {"episodes": played, "search": searches}


if __name__ == "__main__":
    main()

"""WebShop at the original's scale: search latency and memory with 100,000 and 1,000,000 generated products.

Per size, in a fresh process (so memory is the catalog's own): the time to generate and load the catalog and
to build the index, the resident memory after each, and the latency of the shop's search (``SearchEngine.search``:
BM25 scores, hits only, best first with ties in asin order, top 50) beside its floor, raw ``bm25s`` retrieval of the
top 50 on the same index and the same tokenized queries.

Target: a search under 10 ms at 100,000 products. The 1,000,000 run takes a few minutes and several GB.

    .venv/bin/python benchmarks/bench_webshop_scale.py            # 100,000 and 1,000,000
    .venv/bin/python benchmarks/bench_webshop_scale.py 100000     # one size
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import bench_webshop  # beside this script

ROUNDS = 5
#: bench_webshop's queries, an instruction as a query (many common terms: the most hits to rank) and one word.
QUERIES = (
    *bench_webshop.QUERIES,
    "i need a long lasting 6.76 fl oz bottle of perfume, and price lower than 100.00 dollars",
    "shampoo",
)


def resident_mb() -> float:
    """This process's resident memory (Linux ``/proc``), in MB."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * 4096 / 1e6


def _milliseconds(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def measure(count: int) -> dict[str, Any]:
    """One size, in this process."""
    from toolbench.mock_services.webshop import generate
    from toolbench.mock_services.webshop.search import SEARCH_RETURN_N, SearchEngine

    base = resident_mb()
    started = time.perf_counter()
    products = list(generate.products(count))
    catalog_s = time.perf_counter() - started
    catalog_mb = resident_mb() - base
    started = time.perf_counter()
    engine = SearchEngine(products)
    index_s = time.perf_counter() - started
    index_mb = resident_mb() - base - catalog_mb

    shop_times, floor_times = [], []
    tokenized = [
        engine._tokenizer.tokenize([q.lower()], update_vocab=False, show_progress=False, return_as="ids")[0]
        for q in QUERIES
    ]
    for _ in range(ROUNDS):
        for query, ids in zip(QUERIES, tokenized, strict=True):
            started = time.perf_counter()
            engine.search(query)
            shop_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            engine._index.retrieve([ids], k=SEARCH_RETURN_N, show_progress=False, n_threads=1)
            floor_times.append(time.perf_counter() - started)
    return {
        "products": count,
        "catalog_s": round(catalog_s, 1),
        "index_s": round(index_s, 1),
        "catalog_mb": round(catalog_mb),
        "index_mb": round(index_mb),
        "search": _milliseconds(shop_times),
        "raw_bm25s_top50": _milliseconds(floor_times),
    }


def run(count: int) -> dict[str, Any]:
    """One size in a fresh process."""
    script = Path(__file__).resolve()
    out = subprocess.run(
        [sys.executable, str(script), "--one", str(count)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(sizes: tuple[int, ...] = (100_000, 1_000_000)) -> list[dict[str, Any]]:
    rows = []
    for count in sizes:
        row = run(count)
        rows.append(row)
        print(
            f"WebShop with {count:,} products: search median {row['search']['median_ms']} ms, "
            f"p95 {row['search']['p95_ms']} ms, max {row['search']['max_ms']} ms "
            f"(raw bm25s top 50: median {row['raw_bm25s_top50']['median_ms']} ms); "
            f"catalog {row['catalog_s']} s and {row['catalog_mb']:,} MB, index {row['index_s']} s and "
            f"{row['index_mb']:,} MB (target: search under 10 ms at 100,000)"
        )
    return rows


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(measure(int(sys.argv[2]))))
    else:
        main(tuple(int(arg) for arg in sys.argv[1:]) or (100_000, 1_000_000))

"""How fast `aiq mcp` answers an MCP client (docs/performance.md).

    ~/.cache/aiq-mcp-venv/bin/python benches/mcp_bench.py [AIQ_BINARY]   # default: target/release/aiq

Needs the MCP Python SDK (tests/mcp/requirements.txt; .ci/run creates the
virtual environment). Builds a SQLite shop with 100,000 orders in a temp
dir and measures, over stdio with the initialize handshake:
  1. start: spawning `aiq mcp shop.db` to a finished initialize (median of 10);
  2. a `run_query` round trip for a one-row aggregate (median and p95 of 300);
  3. a `run_query` returning 500 rows (the default cap) as table text and
     typed structured rows (median of 50);
  4. `describe_schema` (median of 100).
"""

import os
import sqlite3
import statistics
import sys
import tempfile
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def shop(path):
    c = sqlite3.connect(path)
    c.executescript(
        """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, country TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                             total REAL, status TEXT, ordered_at TEXT);"""
    )
    c.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [(i, f"customer {i}", ["DE", "US", "FR", "GB"][i % 4]) for i in range(1, 1001)],
    )
    c.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
        [
            (i, 1 + i % 1000, (i % 997) / 7, ["delivered", "shipped"][i % 2], f"2025-{1 + i % 12:02}-01")
            for i in range(1, 100_001)
        ],
    )
    c.commit()


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


async def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    aiq = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "target", "release", "aiq")
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "shop.db")
        shop(db)
        env = dict(os.environ, AIQ_HOME=os.path.join(work, "home"), OLLAMA_HOST="127.0.0.1:9")
        for key in ("AIQ_PROVIDER", "AIQ_MODEL", "AIQ_BASE_URL", "AIQ_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            env.pop(key, None)
        server = StdioServerParameters(command=aiq, args=["mcp", "--quiet", db], env=env)

        starts = []
        for _ in range(10):
            t = time.perf_counter()
            async with Client(server, mode="legacy") as client:
                starts.append(time.perf_counter() - t)
        print(f"| start to a finished initialize, median of 10 | {ms(statistics.median(starts))} |")

        async with Client(server, mode="legacy") as client:
            one = "SELECT status, count(*) AS n, round(sum(total), 2) AS revenue FROM orders GROUP BY status"
            await client.call_tool("run_query", {"sql": one})
            times = []
            for _ in range(300):
                t = time.perf_counter()
                r = await client.call_tool("run_query", {"sql": one})
                times.append(time.perf_counter() - t)
                assert not r.is_error, r
            times.sort()
            print(
                f"| run_query, a 2-row aggregate over 100,000 orders, median / p95 of 300 | "
                f"{ms(statistics.median(times))} / {ms(times[int(len(times) * 0.95)])} |"
            )
            big = "SELECT * FROM orders ORDER BY id"
            times = []
            for _ in range(50):
                t = time.perf_counter()
                r = await client.call_tool("run_query", {"sql": big})
                times.append(time.perf_counter() - t)
                assert r.structured_content["row_count"] == 500, r.structured_content["row_count"]
            print(f"| run_query returning 500 rows (the cap) as text and typed rows, median of 50 | {ms(statistics.median(times))} |")
            times = []
            for _ in range(100):
                t = time.perf_counter()
                await client.call_tool("describe_schema", {})
                times.append(time.perf_counter() - t)
            print(f"| describe_schema, median of 100 | {ms(statistics.median(times))} |")


if __name__ == "__main__":
    anyio.run(main)

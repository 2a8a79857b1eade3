"""`aiq mcp` under load (docs/performance.md): many MCP clients at once.

    ~/.cache/aiq-mcp-venv/bin/python benches/mcp_load.py [AIQ_BINARY] [--calls N] [--levels 1,10,64,200]

Needs the MCP Python SDK (tests/mcp/requirements.txt; .ci/run creates the
virtual environment); a binary linked against the prebuilt DuckDB needs its
LD_LIBRARY_PATH (`. .ci/features.sh` sets it). Builds a SQLite shop with 100,000 orders in a temp
dir, starts `aiq mcp --http 127.0.0.1:0 --token …` on it with the default
limits ([mcp] max_concurrent = 4, max_queued = 64) and, for each level,
opens that many sessions at once with the official SDK (each with the
bearer token); each session sends `run_query` calls one after the other,
`--calls` (400) in all at each level, at least 2 a session. Then one stdio
client sends 10 calls at a time, `--calls` in all. Reports calls/s, p50/p99 latency of a call as the client sees it,
calls refused as busy, other errors, and the server's peak RSS (VmHWM).

Goals: 0 refusals up to 64 concurrent callers; calls/s at 10 sessions at
least that of 1 session; p99 at 64 sessions within (max_queued /
max_concurrent + 1) × the p99 of 1 session; peak RSS under 200 MB at 200
sessions.
"""

import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "bench-token-0c1d"
QUERY = "SELECT status, count(*) AS n FROM orders WHERE customer_id % 10 = 3 GROUP BY status"


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


def peak_rss_mb(pid):
    """The process's peak resident set (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Tally:
    def __init__(self):
        self.latencies = []
        self.refused = 0
        self.errors = []

    def add(self, seconds, result):
        self.latencies.append(seconds)
        if result.is_error:
            text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
            if text.startswith("busy"):
                self.refused += 1
            else:
                self.errors.append(text[:200])

    def row(self, label, wall, rss):
        lat = sorted(self.latencies)
        n = len(lat)
        p99 = lat[min(n - 1, int(n * 0.99))]
        return {
            "label": label,
            "calls": n,
            "calls_s": n / wall,
            "p50_ms": statistics.median(lat) * 1000,
            "p99_ms": p99 * 1000,
            "refused": self.refused,
            "errors": len(self.errors),
            "rss_mb": rss,
            "first_error": self.errors[0] if self.errors else "",
        }


async def call(client, tally):
    t = time.perf_counter()
    r = await client.call_tool("run_query", {"sql": QUERY})
    tally.add(time.perf_counter() - t, r)


async def http_level(url, sessions, calls, tally):
    ready = anyio.Event()
    opened = [0]

    async def session():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", read_timeout_seconds=300) as client:
            opened[0] += 1
            if opened[0] == sessions:
                ready.set()
            # Every session is open before the first call: the calls overlap.
            await ready.wait()
            for _ in range(calls):
                await call(client, tally)

    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(session)


def print_rows(rows):
    print("| clients | calls | calls/s | p50 | p99 | refused | other errors | peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['label']} | {r['calls']} | {r['calls_s']:.0f} | {r['p50_ms']:.1f} ms | {r['p99_ms']:.1f} ms "
            f"| {r['refused']} | {r['errors']} | {r['rss_mb']:.0f} MB |"
        )
    for r in rows:
        if r["first_error"]:
            print(f"{r['label']}: first error: {r['first_error']}", file=sys.stderr)


async def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser()
    p.add_argument("aiq", nargs="?", default=os.path.join(root, "target", "release", "aiq"))
    p.add_argument("--calls", type=int, default=400, help="calls at each level")
    p.add_argument("--levels", default="1,10,64,200")
    args = p.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "shop.db")
        shop(db)
        env = dict(os.environ, AIQ_HOME=os.path.join(work, "home"), OLLAMA_HOST="127.0.0.1:9")
        for key in ("AIQ_PROVIDER", "AIQ_MODEL", "AIQ_BASE_URL", "AIQ_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AIQ_MCP_TOKEN"):
            env.pop(key, None)

        server = subprocess.Popen(
            [args.aiq, "mcp", db, "--http", "127.0.0.1:0", "--token", TOKEN],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url, said = None, []
            for line in server.stderr:
                said.append(line)
                m = re.search(r"http://\S+", line)
                if m:
                    url = m.group(0)
                    break
            assert url, "aiq mcp --http did not start:\n" + "".join(said)
            # Drain stderr so the server never blocks on it.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            for sessions in levels:
                tally = Tally()
                t = time.perf_counter()
                each = max(2, -(-args.calls // sessions))
                await http_level(url, sessions, each, tally)
                wall = time.perf_counter() - t
                rows.append(tally.row(f"HTTP, {sessions} session{'s' if sessions > 1 else ''}", wall, peak_rss_mb(server.pid)))
        finally:
            server.terminate()
            server.wait()

        # stdio: aiq started through sh, which writes down its pid first.
        pid_file = os.path.join(work, "aiq.pid")
        stdio = StdioServerParameters(
            command="sh",
            args=["-c", f'echo $$ > "{pid_file}"; exec "{args.aiq}" mcp --quiet "{db}"'],
            env=env,
        )
        tally = Tally()
        async with Client(stdio, mode="legacy", read_timeout_seconds=300) as client:
            await client.call_tool("run_query", {"sql": "SELECT 1"})
            t = time.perf_counter()
            for _ in range(max(1, args.calls // 10)):
                async with anyio.create_task_group() as tg:
                    for _ in range(10):
                        tg.start_soon(call, client, tally)
            wall = time.perf_counter() - t
            with open(pid_file) as f:
                pid = int(f.read().strip())
            rows.append(tally.row("stdio, 10 parallel calls", wall, peak_rss_mb(pid)))
    print_rows(rows)
    one = next((r for r in rows if r["label"] == "HTTP, 1 session"), None)
    if one:
        bound = (64 / 4 + 1) * one["p99_ms"]
        print(f"\np99 bound at 64 sessions: (64 / 4 + 1) × {one['p99_ms']:.1f} ms = {bound:.0f} ms")


if __name__ == "__main__":
    anyio.run(main)

"""A soak of `aiq mcp` (docs/performance.md): clients that behave and clients
that do not, for a bounded time, against one HTTP server and many stdio
servers, with nothing but Python's standard library.

    python3 benches/soak.py AIQ_BINARY [--seconds 180] [--workers 6] [--seed 1]

A binary linked against the prebuilt DuckDB needs its LD_LIBRARY_PATH
(`. .ci/features.sh` sets it). Builds a small SQLite shop in a temp dir,
starts `aiq mcp --http` on it ([mcp] max_sessions = 64, session_idle_secs
= 5) and lets `--workers` threads pick, again and again until the time is
up, one of:

- an HTTP session that runs a generated statement and ends (DELETE), or is
  abandoned without a word;
- junk over HTTP: no token, a body that is not JSON, a frame nested 300
  deep, a wrong content type — each must get a 4xx answer;
- a call over HTTP whose client hangs up before the answer (a disconnect);
- a stdio server (`aiq mcp DB`) fed good calls and malformed frames (lone
  surrogates, cut JSON, invalid UTF-8, params that are not an object);
  every request must get an answer, and the server must exit 0 when its
  client goes — sometimes in the middle of a slow call (a cancel).

It reports calls, answers, errors, deaths (a server that died or exited
non-zero), hangs (a request without an answer in 20 s), and the HTTP
server's RSS and open files at the start, after the load, and after idle
sessions had time to close. Exit 1 on any death or hang, RSS after the
settle above twice its start (plus 16 MB), or open files not back within 8
of the start.
"""

import argparse
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "soak-token-5e2a"
ANSWER_WITHIN = 20.0

STATEMENTS = [
    "SELECT count(*) FROM orders",
    "SELECT status, count(*) AS n FROM orders GROUP BY status",
    "SELECT c.name, sum(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.name",
    "SELECT * FROM orders LIMIT 2000",
    "DELETE FROM orders",
    "SELECT nope FROM nowhere",
    "SELEC 1",
    "SELECT " + "(" * 60 + "1" + ")" * 60,
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c",
    "SELECT load_extension('x')",
    "ATTACH '/etc/passwd' AS p",
    "SELECT 1; SELECT 2",
]
SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c"
# Malformed frames, and whether the answer can carry their id.
BAD_FRAMES = [
    (b'{"jsonrpc":"2.0","id":"%d","method":"tools/list","params":{"c":"\\ud800"}}', False),
    (b'{"jsonrpc":"2.0","id":"%d","method":"tools/li', False),
    (b'{"jsonrpc":"2.0","id":"%d","method":"\xff"}', False),
    (b'{"jsonrpc":"2.0","id":"%d","method":"tools/list","params":"x"}', True),
    (b'{"jsonrpc":"2.0","id":"%d","method":"tools/list","params":[]}', True),
    (b'{"jsonrpc":"1.0","id":"%d","method":"tools/list"}', True),
]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n


def shop(path):
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, country TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, status TEXT, total REAL);
        """
    )
    con.executemany("INSERT INTO customers VALUES (?, ?, ?)", [(i, f"c{i}", "DE") for i in range(200)])
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?)",
        [(i, i % 200, ["delivered", "shipped", "cancelled"][i % 3], i * 1.5) for i in range(20000)],
    )
    con.commit()
    con.close()


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def open_files(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def http(port, method, body=b"", session=None, token=True, ctype="application/json", timeout=ANSWER_WITHIN):
    """One raw HTTP request; (status, headers, body). Raises on no answer."""
    head = [
        f"{method} /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Accept: application/json, text/event-stream",
        f"Content-Type: {ctype}",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if token:
        head.append(f"Authorization: Bearer {TOKEN}")
    if session:
        head.append(f"Mcp-Session-Id: {session}")
        head.append("Mcp-Protocol-Version: 2025-06-18")
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, rest


def rpc(method, params, id_=None):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        msg["id"] = id_
    return json.dumps(msg).encode()


INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}


def http_session(port, rng, stats):
    status, headers, _ = http(port, "POST", rpc("initialize", INIT, 1))
    stats.add("http_calls")
    if status == 503:
        stats.add("http_busy")
        return
    if status != 200 or "mcp-session-id" not in headers:
        stats.add("http_errors")
        stats.add(f"http_status_{status}")
        return
    stats.add("http_answers")
    sid = headers["mcp-session-id"]
    http(port, "POST", rpc("notifications/initialized", {}), session=sid)
    sql = rng.choice(STATEMENTS)
    status, _, body = http(port, "POST", rpc("tools/call", {"name": "run_query", "arguments": {"sql": sql}}, 2), session=sid)
    stats.add("http_calls")
    if status == 200 and b'"id":2' in body.replace(b" ", b""):
        stats.add("http_answers")
    elif status == 200:
        # Answered, in an event stream this script does not take apart.
        stats.add("http_answers_unparsed")
    else:
        stats.add("http_errors")
        stats.add(f"http_status_{status}")
    if rng.random() < 0.8:
        http(port, "DELETE", session=sid)
        stats.add("sessions_ended")
    else:
        stats.add("sessions_abandoned")


def http_junk(port, rng, stats):
    kind = rng.randrange(4)
    if kind == 0:
        status, _, _ = http(port, "POST", rpc("initialize", INIT, 1), token=False)
    elif kind == 1:
        status, _, _ = http(port, "POST", b"{not json")
    elif kind == 2:
        status, _, _ = http(port, "POST", b"[" * 300 + b"]" * 300)
    else:
        status, _, _ = http(port, "POST", rpc("initialize", INIT, 1), ctype="text/plain")
    stats.add("junk_sent")
    if 400 <= status < 500 or status == 503:
        stats.add("junk_answered")
    else:
        stats.add("junk_wrong_status")
        stats.add(f"junk_status_{status}")


def http_disconnect(port, rng, stats):
    status, headers, _ = http(port, "POST", rpc("initialize", INIT, 1))
    if status != 200:
        return
    sid = headers.get("mcp-session-id")
    body = rpc("tools/call", {"name": "run_query", "arguments": {"sql": SLOW}}, 2)
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Mcp-Session-Id: {sid}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n"
    )
    s.sendall(head.encode() + body)
    time.sleep(rng.uniform(0.05, 0.5))
    s.close()
    stats.add("disconnects")
    http(port, "DELETE", session=sid)


def stdio_session(binary, db, env, rng, stats):
    proc = subprocess.Popen(
        [binary, "mcp", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    answers = {}
    nulls = [0]
    done = threading.Event()

    def read():
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and "id" in msg:
                if msg["id"] is None:
                    nulls[0] += 1
                else:
                    answers[json.dumps(msg["id"])] = msg
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    asked = []

    def send(raw, id_):
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()
        if id_ is not None:
            asked.append(id_)

    try:
        send(rpc("initialize", INIT, 0), 0)
        send(rpc("notifications/initialized", {}), None)
        unreadable = 0
        for n in range(1, rng.randrange(3, 9)):
            if rng.random() < 0.4:
                frame, readable = rng.choice(BAD_FRAMES)
                # The answer to a frame that cannot be parsed has id null.
                send(frame % n, str(n) if readable else None)
                unreadable += 0 if readable else 1
                stats.add("frames_malformed")
            else:
                send(rpc("tools/call", {"name": "run_query", "arguments": {"sql": rng.choice(STATEMENTS)}}, n), n)
                stats.add("stdio_calls")
        cancel = rng.random() < 0.3
        if cancel:
            send(rpc("tools/call", {"name": "run_query", "arguments": {"sql": SLOW}}, 99), None)
            time.sleep(rng.uniform(0.05, 0.4))
            stats.add("cancels")
        else:
            deadline = time.time() + ANSWER_WITHIN

            def answered():
                return all(json.dumps(i) in answers for i in asked) and nulls[0] >= unreadable

            while time.time() < deadline and not answered():
                time.sleep(0.02)
            missing = [i for i in asked if json.dumps(i) not in answers]
            missing_nulls = max(0, unreadable - nulls[0])
            if missing or missing_nulls:
                stats.add("hangs", len(missing) + missing_nulls)
            stats.add("stdio_answers", len(asked) - len(missing) + min(nulls[0], unreadable))
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        code = proc.wait(timeout=ANSWER_WITHIN)
    except subprocess.TimeoutExpired:
        stats.add("hangs")
        proc.kill()
        proc.wait()
        return
    if code != 0:
        stats.add("deaths")
        stats.add(f"stdio_exit_{code}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="aiq-soak-")
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write("[mcp]\nmax_sessions = 64\nsession_idle_secs = 5\ntimeout_secs = 30\n")
    db = os.path.join(tmp, "shop.db")
    shop(db)
    env = dict(os.environ, AIQ_HOME=home, HOME=os.path.join(tmp, "fakehome"), NO_COLOR="1", AIQ_PAGER="")
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AIQ_API_KEY", "AIQ_BASE_URL", "AIQ_PROVIDER"):
        env.pop(k, None)
    env["OLLAMA_HOST"] = "127.0.0.1:9"
    server = subprocess.Popen(
        [args.binary, "mcp", db, "--http", "127.0.0.1:0", "--token", TOKEN],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    port = None
    for line in server.stderr:
        line = line.decode(errors="replace")
        if "listening on http://" in line:
            port = int(line.rsplit(":", 1)[1].split("/")[0])
            break
    if port is None:
        print("the HTTP server did not start", file=sys.stderr)
        return 1
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    stats = Stats()
    # Warm up once, then measure the start.
    http_session(port, random.Random(0), Stats())
    time.sleep(0.5)
    start = {"rss_kb": rss_kb(server.pid), "open_files": open_files(server.pid)}
    stop = time.time() + args.seconds
    errors = []

    def worker(n):
        rng = random.Random(args.seed * 1000 + n)
        while time.time() < stop:
            pick = rng.random()
            try:
                if pick < 0.40:
                    http_session(port, rng, stats)
                elif pick < 0.60:
                    http_junk(port, rng, stats)
                elif pick < 0.70:
                    http_disconnect(port, rng, stats)
                else:
                    stdio_session(args.binary, db, env, rng, stats)
            except (OSError, ValueError) as e:
                stats.add("client_errors")
                if len(errors) < 5:
                    errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(args.workers)]
    began = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.time() - began
    loaded = {"rss_kb": rss_kb(server.pid), "open_files": open_files(server.pid)}
    # Idle sessions close after 5 s; the sweep runs every quarter of it.
    time.sleep(8)
    settled = {"rss_kb": rss_kb(server.pid), "open_files": open_files(server.pid)}
    alive = server.poll() is None
    try:
        status, _, _ = http(port, "POST", rpc("initialize", INIT, 1))
        still_serves = status == 200
    except OSError:
        still_serves = False
    if not alive:
        stats.add("deaths")
    if alive and not still_serves:
        stats.add("hangs")
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
    c = stats.counts
    report = {
        "seconds": round(took, 1),
        "workers": args.workers,
        "counts": dict(sorted(c.items())),
        "deaths": c.get("deaths", 0),
        "hangs": c.get("hangs", 0),
        "start": start,
        "after_load": loaded,
        "after_settle": settled,
        "client_errors": errors,
    }
    print(json.dumps(report, indent=2))
    failed = []
    if report["deaths"]:
        failed.append(f"{report['deaths']} deaths")
    if report["hangs"]:
        failed.append(f"{report['hangs']} hangs")
    if c.get("junk_wrong_status"):
        failed.append(f"{c['junk_wrong_status']} junk requests got a wrong status")
    if settled["rss_kb"] > 2 * start["rss_kb"] + 16 * 1024:
        failed.append(f"RSS {start['rss_kb']} → {settled['rss_kb']} kB after the settle")
    if settled["open_files"] > start["open_files"] + 8:
        failed.append(f"open files {start['open_files']} → {settled['open_files']}")
    if failed:
        print("soak FAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    print(f"soak passed: {sum(v for k, v in c.items() if k.endswith('calls'))} calls in {took:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

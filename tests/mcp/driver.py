"""Drives `aiq mcp` from the official MCP Python SDK, as a desktop assistant
or a coding agent would, for tests/mcp.rs. One scenario per run; results go
to stdout as JSON lines, so the Rust test can read them as they come.

    driver.py SCENARIO --era legacy|modern (--url URL | -- COMMAND ARGS...)

`legacy` connects with the initialize handshake (protocol 2025-11-25, what
desktop assistants speak today); `modern` lets the SDK pick the newest
protocol (2026-07-28, per-request envelopes).
"""

import argparse
import json
import os
import sys
import time

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def say(obj):
    print(json.dumps(obj), flush=True)


def result_json(r):
    text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
    return {"is_error": r.is_error, "text": text, "structured": r.structured_content}


def make_client(args, elicit=None):
    mode = "legacy" if args.era == "legacy" else "auto"
    if args.url:
        server = args.url
        if args.token:
            # The server's token, as an HTTP client sends it (SPEC §12).
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers={"Authorization": f"Bearer {args.token}"})
            server = streamable_http_client(args.url, http_client=http)
    else:
        env = dict(os.environ)
        server = StdioServerParameters(command=args.command[0], args=args.command[1:], env=env)
    return Client(server, mode=mode, elicitation_callback=elicit, read_timeout_seconds=120)


async def basic(args):
    async with make_client(args) as client:
        tools = await client.list_tools()
        resources = await client.list_resources()
        out = {
            "protocol": client.protocol_version,
            "server": client.server_info.name if client.server_info else None,
            "instructions": client.instructions,
            "tools": [
                {
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                    "output_schema": t.output_schema,
                    "read_only": t.annotations.read_only_hint if t.annotations else None,
                }
                for t in tools.tools
            ],
            "resources": [str(r.uri) for r in resources.resources],
        }
        if resources.resources:
            read = await client.read_resource(str(resources.resources[0].uri))
            out["resource_text"] = read.contents[0].text
        out["sources"] = result_json(await client.call_tool("list_sources", {}))
        extra = {"source": args.source} if args.source else {}
        out["schema"] = result_json(
            await client.call_tool("describe_schema", {**extra, "question": "orders per customer"})
        )
        # `SOURCE ==> SQL` runs on that source, plain SQL on the default.
        for i, sql in enumerate(args.sql or []):
            call = dict(extra)
            if " ==> " in sql:
                call["source"], sql = sql.split(" ==> ", 1)
            out[f"query{i}"] = result_json(await client.call_tool("run_query", {**call, "sql": sql}))
        if args.question:
            out["ask"] = result_json(await client.call_tool("ask", {**extra, "question": args.question}))
        say(out)


async def corpus(args):
    with open(args.plan) as f:
        plan = json.load(f)
    async with make_client(args) as client:
        results = []
        for call in plan:
            r = await client.call_tool("run_query", call)
            results.append(result_json(r))
        say({"results": results})


def _refused(r):
    return r["is_error"] and r["text"].startswith(("refused", "not run"))


def _tree(root, skip):
    """Every file under root (but skip) with a hash of its bytes."""
    import hashlib

    out = {}
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(base, d) != skip]
        for name in files:
            path = os.path.join(base, name)
            try:
                with open(path, "rb") as f:
                    out[path] = hashlib.sha1(f.read()).hexdigest()
            except OSError:
                out[path] = "unreadable"
    return out


async def attack(args):
    """The generated attacker's corpus (tests/gate_corpus.rs): each call,
    then, when it ran, the probes that prove the source still answers
    unchanged; the files that changed after each call. One JSON line per
    call; stops at the first call that leaves the source broken."""
    with open(args.plan) as f:
        plan = json.load(f)
    before = _tree(plan["watch"], plan["skip"])
    async with make_client(args) as client:
        want = result_json(await client.call_tool("run_query", {"sql": plan["probe"]}))
        say({"probe_want": want})
        evil_before = False
        for call in plan["calls"]:
            line = {"id": call["id"]}
            try:
                r = result_json(await client.call_tool("run_query", {"sql": call["sql"]}))
                line["result"] = r
                if not _refused(r):
                    probe = result_json(await client.call_tool("run_query", {"sql": plan["probe"]}))
                    line["probe"] = probe
                    if not probe["is_error"] and probe["text"] != want["text"]:
                        line["changed_data"] = True
                        want = probe
                    evil = result_json(await client.call_tool("run_query", {"sql": plan["evil"]}))
                    if not evil["is_error"] and not evil_before:
                        line["created_evil"] = True
                    evil_before = not evil["is_error"]
            except Exception as e:  # the server died or the session broke
                line["died"] = f"{type(e).__name__}: {e}"
            after = _tree(plan["watch"], plan["skip"])
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            if changed:
                line["changed"] = changed
                before = after
            say(line)
            # A source that no longer answers is started afresh after this call.
            if "died" in line or line.get("probe", {}).get("is_error"):
                return


async def cancel(args):
    """Starts the slow query, says so, cancels it when told (a line on
    stdin), then proves the server still answers."""
    extra = {"source": args.source} if args.source else {}
    async with make_client(args) as client:
        done = {}

        async def slow(scope_holder):
            with anyio.CancelScope() as scope:
                scope_holder["scope"] = scope
                r = await client.call_tool("run_query", {**extra, "sql": args.sql[0]})
                done["result"] = result_json(r)

        async with anyio.create_task_group() as tg:
            holder = {}
            tg.start_soon(slow, holder)
            await anyio.sleep(0.2)
            say({"started": True})
            await anyio.to_thread.run_sync(sys.stdin.readline)
            started = time.monotonic()
            holder["scope"].cancel()
        say({"cancelled": "result" not in done, "result": done.get("result")})
        after = await client.call_tool("run_query", {**extra, "sql": args.sql[1]})
        say({"after": result_json(after), "after_s": time.monotonic() - started})


async def hang(args):
    """Starts the slow query and waits to be killed mid-query."""
    extra = {"source": args.source} if args.source else {}
    async with make_client(args) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "run_query", {**extra, "sql": args.sql[0]})
            await anyio.sleep(0.2)
            say({"started": True})
            await anyio.sleep(3600)


async def write(args):
    """A write, answered by the elicitation callback with `--answer`."""
    asked = []

    async def elicit(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        if args.answer == "accept":
            return types.ElicitResult(action="accept", content={"run": True})
        if args.answer == "untick":
            return types.ElicitResult(action="accept", content={"run": False})
        if args.answer == "hang":  # a user who never answers
            await anyio.sleep(3600)
        return types.ElicitResult(action=args.answer)

    callback = None if args.answer == "none" else elicit
    extra = {"source": args.source} if args.source else {}
    async with make_client(args, elicit=callback) as client:
        r = await client.call_tool("run_query", {**extra, "sql": args.sql[0]})
        out = {"result": result_json(r), "asked": asked, "protocol": client.protocol_version}
        if len(args.sql) > 1:
            out["after"] = result_json(await client.call_tool("run_query", {**extra, "sql": args.sql[1]}))
        say(out)


async def bad_calls(args):
    """Calls a client can get wrong; the server must answer each and go on."""
    out = {}
    async with make_client(args) as client:
        for key, name, arguments in [
            ("sql_not_text", "run_query", {"sql": 42}),
            ("unknown_field", "run_query", {"query": "SELECT 1"}),
            ("no_sql", "run_query", {}),
            ("unknown_tool", "drop_everything", {}),
        ]:
            try:
                out[key] = result_json(await client.call_tool(name, arguments))
            except Exception as e:  # a protocol error: the SDK raises it
                out[key] = {"raised": type(e).__name__, "message": str(e)}
        try:
            await client.read_resource("aiq://nope/schema")
            out["bad_resource"] = {"raised": None}
        except Exception as e:
            out["bad_resource"] = {"raised": type(e).__name__, "message": str(e)}
        out["after"] = result_json(await client.call_tool("run_query", {"sql": "SELECT 1 AS one"}))
        say(out)


async def busy(args):
    """Two slow calls at once with max_concurrent = 1 and max_queued = 0: the
    second is refused as busy."""
    extra = {"source": args.source} if args.source else {}
    async with make_client(args) as client:
        results = {}

        async def call(key):
            r = await client.call_tool("run_query", {**extra, "sql": args.sql[0]})
            results[key] = result_json(r)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "first")
            await anyio.sleep(0.5)
            tg.start_soon(call, "second")
        say(results)


async def parallel(args):
    """`--calls N` run_query calls at once, `--spacing` seconds apart: call i
    runs sql[i % len(sql)]. One client for all of them, or with
    `--sessions` one client (session) each. With `--cancel K`, call K is
    cancelled `--cancel-after` seconds after it was sent. One JSON line: the
    results in call order (`null` for the cancelled one)."""
    extra = {"source": args.source} if args.source else {}
    results = [None] * args.calls
    scopes = {}

    async def one(client, i):
        with anyio.CancelScope() as scope:
            scopes[i] = scope
            sql = args.sql[i % len(args.sql)]
            r = await client.call_tool("run_query", {**extra, "sql": sql})
            results[i] = result_json(r)

    async def own_session(i):
        async with make_client(args) as client:
            await one(client, i)

    async def cancel_later():
        await anyio.sleep(args.spacing * args.cancel + args.cancel_after)
        scopes[args.cancel].cancel()

    if args.sessions:
        async with anyio.create_task_group() as tg:
            for i in range(args.calls):
                tg.start_soon(own_session, i)
                await anyio.sleep(args.spacing)
    else:
        async with make_client(args) as client:
            async with anyio.create_task_group() as tg:
                if args.cancel is not None:
                    tg.start_soon(cancel_later)
                for i in range(args.calls):
                    tg.start_soon(one, client, i)
                    await anyio.sleep(args.spacing)
            after = None
            if args.after:
                after = result_json(await client.call_tool("run_query", {**extra, "sql": args.after}))
        say({"results": results, "after": after})
        return
    say({"results": results})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario")
    p.add_argument("--era", choices=["legacy", "modern"], default="legacy")
    p.add_argument("--url")
    p.add_argument("--token")
    p.add_argument("--source")
    p.add_argument("--sql", action="append")
    p.add_argument("--question")
    p.add_argument("--plan")
    p.add_argument("--answer", default="accept")
    p.add_argument("--calls", type=int, default=8)
    p.add_argument("--spacing", type=float, default=0.0)
    p.add_argument("--sessions", action="store_true")
    p.add_argument("--cancel", type=int)
    p.add_argument("--cancel-after", type=float, default=0.5)
    p.add_argument("--after")
    argv = sys.argv[1:]
    command = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1 :]
    args = p.parse_args(argv)
    args.command = command
    scenario = globals()[args.scenario]
    anyio.run(scenario, args)


if __name__ == "__main__":
    main()

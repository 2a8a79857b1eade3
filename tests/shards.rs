//! Bigger than one machine (SPEC §4.1): aiq on a MariaDB Spider head
//! whose tables are sharded across two MariaDB servers, and on a
//! PostgreSQL server whose tables are partitioned (100 partitions, and
//! `postgres_fdw` foreign partitions on two more servers) — all real
//! servers the tests start (tests/common/shards.rs). The schema describes
//! each parent once, queries span the shards, a timeout and Ctrl-C stop
//! the query on every server, the catalog cache follows the head, and
//! read-only holds through the remote tables: the server itself refuses a
//! write there, and the attacker's corpus through `-e`, Lua and MCP
//! leaves every server's rows as they were. Under `AIQ_REQUIRE_SERVERS=1`
//! (CI) a setup that cannot start fails instead of skipping.

#![cfg(unix)]

mod common;

use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::attack::{self, Engine};
use common::findings::{report, Finding};
use common::llm::{ModelServer, Reply};
use common::servers::{Server, PASSWORD};
use common::shards::{self, EVENTS, EVENT_PARTITIONS, LINK_PASSWORD};
use common::ways::{self, Target};
use common::{replace_bytes, stderr_of, stdout_of, Sandbox};

/// One test at a time per setup: the snapshots compare whole tables, and
/// the cache tests change the head's catalog.
static SPIDER: Mutex<()> = Mutex::new(());
static PG: Mutex<()> = Mutex::new(());

fn lock(m: &'static Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn exec(sb: &Sandbox, url: &str, sql: &str) -> std::process::Output {
    sb.aiq()
        .args([url, "-e", sql, "-f", "csv"])
        .output()
        .unwrap()
}

/// `-e SQL` as CSV, which must succeed.
fn csv(sb: &Sandbox, url: &str, sql: &str) -> String {
    let out = exec(sb, url, sql);
    assert!(out.status.success(), "{sql}: {}", stderr_of(&out));
    stdout_of(&out)
}

fn schema(sb: &Sandbox, url: &str) -> String {
    let out = sb.aiq().args(["schema", url]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    stdout_of(&out)
}

/// The names of the tables and views `aiq schema` lists.
fn listed(schema: &str) -> Vec<String> {
    schema
        .lines()
        .filter_map(|l| l.strip_prefix("table ").or_else(|| l.strip_prefix("view ")))
        .map(|l| l.split([' ', ':']).next().unwrap_or_default().to_string())
        .collect()
}

/// Nothing of a link's connection details: not its password, login,
/// port, nor the wrapper's words.
fn assert_no_link_details(text: &str, ports: &[u16]) {
    for bad in [LINK_PASSWORD, "'link'", "\"link\"", "wrapper", PASSWORD] {
        assert!(!text.contains(bad), "{bad:?} shown:\n{text}");
    }
    for port in ports {
        assert!(
            !text.contains(&port.to_string()),
            "port {port} shown:\n{text}"
        );
    }
}

// ---------------------------------------------------------------- Spider

#[test]
fn spider_schema_describes_each_sharded_table_once() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let sb = Sandbox::new();
    let text = schema(&sb, &sp.head.url());
    assert_eq!(
        listed(&text),
        ["customers", "events", "orders", "payroll", "visits"],
        "{text}"
    );
    for want in [
        " -- sharded with Spider: partitioned by HASH (id), 2 partitions on servers shard0, shard1\n  id int(11) primary key\n  customer_id int(11) not null\n",
        "table events (~",
        " -- sharded with Spider: partitioned by RANGE (id), 2 partitions on servers shard0, shard1\n  id int(11) primary key\n  v int(11) not null\n",
        " -- partitioned by RANGE (year(day)), 4 partitions\n",
        "e.g. 'cancelled', 'delivered', 'shipped'",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    let ports: Vec<u16> = sp.shards.iter().map(|s| s.port).collect();
    assert_no_link_details(&text, &ports);
    for partition in ["p0", "p1", "y2020", "later"] {
        assert!(!text.contains(partition), "{partition} listed:\n{text}");
    }
}

#[test]
fn spider_queries_span_both_shards() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let sb = Sandbox::new();
    let url = sp.head.url();
    // The rows live on the shards, three orders on each, none on the head.
    let per_shard: Vec<String> = sp
        .shards
        .iter()
        .map(|s| s.admin("SELECT count(*) FROM orders").trim().to_string())
        .collect();
    assert_eq!(per_shard, ["3", "3"]);
    assert_eq!(
        csv(
            &sb,
            &url,
            "SELECT count(*) AS n, sum(total) AS s FROM orders"
        ),
        "n,s\n6,186.74\n"
    );
    assert_eq!(
        csv(
            &sb,
            &url,
            "SELECT c.country, count(*) AS n, sum(o.total) AS spent FROM orders o \
             JOIN customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country"
        ),
        "country,n,spent\nDE,3,67.49\nUS,3,119.25\n"
    );
    assert_eq!(
        csv(
            &sb,
            &url,
            "SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM events WHERE id BETWEEN 990 AND 1010"
        ),
        "n,lo,hi\n21,990,1010\n"
    );
    // A question: the model sees the sharded table described once, and
    // its SQL runs across the shards.
    let model = ModelServer::start(vec![Reply::Text(
        "```sql\nSELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status\n```"
            .into(),
    )]);
    let out = sb
        .aiq_with(&model, "openai")
        .arg(&url)
        .args(["-q", "orders by status?", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&out),
        "status,n\ncancelled,1\ndelivered,4\nshipped,1\n",
        "{}",
        stderr_of(&out)
    );
    let request = &model.chats()[0].raw;
    assert!(
        request.contains(
            "sharded with Spider: partitioned by HASH (id), 2 partitions on servers shard0, shard1"
        ),
        "{request}"
    );
    assert_no_link_details(request, &[sp.shards[0].port, sp.shards[1].port]);
}

/// The statement timeout and Ctrl-C stop a query that reads both shards:
/// aiq says which stopped it, and the head no longer runs it.
#[test]
fn spider_timeout_and_cancel_stop_the_query() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let slow = "SELECT count(*) AS aiq_shard_probe FROM events a, events b, events c WHERE a.v + b.v + c.v < 0";
    let running = "SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%aiq_shard_probe FROM%' AND id <> CONNECTION_ID()";
    let sb = Sandbox::new();
    sb.write_config("[query]\ntimeout_secs = 1\n");
    let started = Instant::now();
    let out = exec(&sb, &sp.head.url(), slow);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ran longer than 1 s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    wait_for(
        &sp.head,
        running,
        "0",
        "the timed-out query still runs on the head",
    );
    assert_ctrl_c_stops(&sp.head, slow, running);
}

/// Starts `slow` through aiq, waits until `running` says it runs, sends
/// Ctrl-C: aiq ends at once with 130 and the query is gone from `server`.
fn assert_ctrl_c_stops(server: &Server, slow: &str, running: &str) {
    let sb = Sandbox::new();
    let mut child = sb
        .std_aiq()
        .args([server.url().as_str(), "-e", slow, "-f", "csv"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(server, running, "1", "the query never started");
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10));
    wait_for(server, running, "0", "the cancelled query still runs");
}

/// Waits (up to 20 s) until `sql` on `server` prints `want`.
fn wait_for(server: &Server, sql: &str, want: &str, why: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = server.admin(sql);
        if got.trim() == want {
            return;
        }
        assert!(Instant::now() < deadline, "{why} ({sql} gave {got:?})");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The catalog cache answers while the head's catalog stays put, and a
/// table sharded anew on the head shows at once.
#[test]
fn spider_catalog_cache_follows_the_head() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let sb = Sandbox::new();
    let url = sp.head.url();
    assert!(schema(&sb, &url).contains("table orders"));
    let entry = sb.only_cache_entry();
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, replace_bytes(&bytes, "visits", "vizits")).unwrap();
    assert!(
        schema(&sb, &url).contains("table vizits"),
        "the cache was not used"
    );
    for shard in &sp.shards {
        shard.admin("CREATE TABLE refunds (id INT PRIMARY KEY, amount DECIMAL(10,2))");
    }
    sp.head.admin(
        "CREATE TABLE refunds (id INT PRIMARY KEY, amount DECIMAL(10,2)) ENGINE=SPIDER \
         COMMENT='wrapper \"mysql\", table \"refunds\"' PARTITION BY KEY (id) \
         (PARTITION a COMMENT='srv \"shard0\"', PARTITION b COMMENT='srv \"shard1\"')",
    );
    let after = schema(&sb, &url);
    sp.head.admin("DROP TABLE refunds");
    for shard in &sp.shards {
        shard.admin("DROP TABLE refunds");
    }
    assert!(
        after.contains("table visits"),
        "a stale cache was used:\n{after}"
    );
    assert!(
        after.contains(" -- sharded with Spider: partitioned by KEY (id), 2 partitions on servers shard0, shard1\n  id int(11) primary key\n  amount decimal(10,2)\n"),
        "{after}"
    );
}

/// Layer 2 on its own: in the read-only session aiq opens, the head
/// refuses every write through its Spider tables. Spider's own functions
/// are not stopped there — they run SQL on the shards with the shards'
/// login — so aiq refuses them in every mode, `--allow-write --yes`
/// included.
#[test]
fn spider_writes_fail_on_the_server_and_its_functions_in_aiq() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let before = sp.snapshot();
    for write in [
        "DELETE FROM orders",
        "UPDATE customers SET name = 'Mallory'",
        "INSERT INTO orders VALUES (99, 1, 1.00, '2024-01-01', 'x')",
        "DELETE FROM events WHERE id < 10",
        "REPLACE INTO customers VALUES (1, 'Mallory', 'XX', 0, '2024-01-01')",
    ] {
        let err = sp
            .head
            .as_login_read_only(&format!("START TRANSACTION READ ONLY; {write}; ROLLBACK;"))
            .expect_err(&format!("the head ran {write}"));
        assert!(err.contains("READ ONLY"), "{write}: {err}");
    }
    let sb = Sandbox::new();
    for sql in [
        "SELECT spider_direct_sql('DELETE FROM orders', '', 'srv \"shard0\"')",
        "SELECT SPIDER_BG_DIRECT_SQL('DELETE FROM orders', '', 'srv \"shard1\"') AS x",
        "SELECT * FROM customers WHERE 1 = `spider_direct_sql`('DELETE FROM customers', '', 'srv \"shard0\"')",
        "SELECT spider_copy_tables('orders', '0', '1')",
        "SELECT spider_ping_table('orders', '', 0, 0, '', 0, 0, 0, 0, 0)",
    ] {
        for flags in [&[][..], &["--allow-write", "--yes"][..]] {
            let out = sb
                .aiq()
                .arg(sp.head.url())
                .args(flags)
                .args(["-e", sql])
                .output()
                .unwrap();
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(5), "{sql} {flags:?}: {err}");
            assert!(err.contains("never allowed"), "{sql}: {err}");
        }
    }
    // The model's way in: the same SQL from the model, even with
    // --allow-write --yes.
    for sql in [
        "SELECT spider_direct_sql('DELETE FROM orders', '', 'srv \"shard0\"') AS done",
        "SELECT spider_copy_tables('orders', '0', '1')",
    ] {
        let model = ModelServer::start(vec![Reply::Text(format!("```sql\n{sql}\n```"))]);
        let out = sb
            .aiq_with(&model, "openai")
            .arg(sp.head.url())
            .args(["-q", "clean up the shards", "--allow-write", "--yes"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(5), "{sql}: {err}");
        assert!(err.contains("is never allowed"), "{sql}: {err}");
    }
    assert_eq!(sp.snapshot(), before, "the data changed");
}

#[test]
fn spider_holds_against_the_generated_corpus() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let before = sp.snapshot();
    let findings = corpus(&sp.head.url(), Engine::MariaDb);
    let after = sp.snapshot();
    let text = report(&findings);
    assert_eq!(after, before, "the data changed\n{text}");
    assert!(findings.is_empty(), "{text}");
}

/// The attacker's corpus against a head as the saved source `shop` with
/// `payroll` hidden: all of it through Lua read-only, a stratified sample
/// through `-e` in both modes and through MCP, with `--allow-write`
/// (never `--yes`) for half of the sample.
fn corpus(url: &str, engine: Engine) -> Vec<Finding> {
    const SEED: u64 = 0x5eed_0042;
    let started = Instant::now();
    let mut findings = Vec::new();
    let mut sent = 0;
    for (mode, allow_write) in [false, true].into_iter().enumerate() {
        let sb = Sandbox::new();
        let outside = attack::outside_folder(sb.path());
        sb.write_config(&format!(
            "[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"{url}\"\nexclude = [\"payroll\"]\n\
             [lua]\ntimeout_secs = 1200\nmemory_mb = 1024\nmax_output_kb = 1048576\n"
        ));
        let corpus = attack::corpus(engine, &outside.display().to_string(), SEED);
        let target = Target {
            sb: &sb,
            source: "shop",
            engine,
            allow_write,
        };
        let sample: Vec<_> = attack::stratified_sample(&corpus, SEED)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| (i + i / 4) % 2 == mode)
            .map(|(_, v)| v)
            .collect();
        // The payloads aimed at remote tables, in every trick, both modes.
        let remote: Vec<_> = corpus
            .iter()
            .filter(|v| v.payload.starts_with("spider") || v.payload.starts_with("fdw"))
            .cloned()
            .collect();
        if !allow_write {
            sent += corpus.len();
            findings.extend(ways::run_lua(&target, &corpus));
        } else {
            sent += remote.len();
            findings.extend(ways::run_lua(&target, &remote));
        }
        sent += sample.len();
        findings.extend(ways::run_exec(&target, &sample));
        if let Some(python) = common::mcp::python() {
            sent += sample.len();
            findings.extend(common::mcp_attack::run_mcp(&target, python, &sample));
        }
    }
    eprintln!(
        "{} through lua, -e and mcp: {sent} variants in {:.1} s",
        engine.name(),
        started.elapsed().as_secs_f64()
    );
    findings
}

// ---------------------------------------------------- PostgreSQL partitions

#[test]
fn postgres_schema_folds_partitions_into_their_parent() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    let sb = Sandbox::new();
    let text = schema(&sb, &pg.head.url());
    assert_eq!(
        listed(&text),
        [
            "customers",
            "event_notes",
            "events",
            "orders",
            "payroll",
            "readings"
        ],
        "{text}"
    );
    for want in [
        format!("table events (~{EVENTS} rows) -- partitioned by RANGE (created_at), {EVENT_PARTITIONS} partitions\n"),
        "  kind text not null, e.g. 'buy', 'click', 'view'\n".to_string(),
        "  primary key (id, created_at)\n".to_string(),
        "table orders (~6 rows) -- partitioned by RANGE (id), 2 partitions, foreign tables on servers shard_a, shard_b\n".to_string(),
        "  status text not null, e.g. 'cancelled', 'delivered', 'shipped'\n".to_string(),
        "table readings -- partitioned by RANGE (id), 2 partitions, foreign tables on servers shard_a, shard_b\n".to_string(),
        "  foreign key (event_id, created_at) -> events(id, created_at)\n".to_string(),
    ] {
        assert!(text.contains(&want), "no {want:?} in\n{text}");
    }
    assert!(!text.contains("events_p"), "{text}");
    assert!(!text.contains("orders_a"), "{text}");
    let ports: Vec<u16> = pg.remotes.iter().map(|s| s.port).collect();
    assert_no_link_details(&text, &ports);
    // The model gets the same: the parent, never a partition.
    let model = ModelServer::start(vec![Reply::Text(
        "```sql\nSELECT kind, count(*) AS n FROM events WHERE created_at >= '2024-01-01' GROUP BY kind ORDER BY kind\n```".into(),
    )]);
    let out = sb
        .aiq_with(&model, "openai")
        .arg(pg.head.url())
        .args(["-q", "events per kind since 2024?", "-f", "csv"])
        .output()
        .unwrap();
    let want = pg.head.admin(
        "SELECT kind, count(*) FROM events WHERE created_at >= '2024-01-01' GROUP BY kind ORDER BY kind",
    );
    assert_eq!(
        stdout_of(&out),
        format!("kind,n\n{}", want.replace('\t', ",")),
        "{}",
        stderr_of(&out)
    );
    let request = &model.chats()[0].raw;
    assert!(
        request.contains("partitioned by RANGE (created_at), 100 partitions"),
        "{request}"
    );
    assert!(!request.contains("events_p"), "{request}");
    assert_no_link_details(request, &ports);
}

#[test]
fn postgres_queries_span_partitions_and_servers() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    let sb = Sandbox::new();
    let url = pg.head.url();
    assert_eq!(
        csv(&sb, &url, "SELECT count(*) AS n, count(DISTINCT date_trunc('month', created_at)) AS months FROM events"),
        format!("n,months\n{EVENTS},{EVENT_PARTITIONS}\n")
    );
    assert_eq!(
        csv(
            &sb,
            &url,
            "SELECT count(*) AS n, sum(total) AS s FROM orders"
        ),
        "n,s\n6,186.74\n"
    );
    assert_eq!(
        csv(
            &sb,
            &url,
            "SELECT c.country, count(*) AS n, sum(o.total) AS spent FROM orders o \
             JOIN customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country"
        ),
        "country,n,spent\nDE,3,67.49\nUS,3,119.25\n"
    );
    // Pruned to the one partition (and server) that holds the rows.
    assert_eq!(
        csv(
            &sb,
            &url,
            "SELECT id, status FROM orders WHERE id >= 5 ORDER BY id"
        ),
        "id,status\n5,delivered\n6,delivered\n"
    );
}

/// The timeout and Ctrl-C stop a query that streams from both foreign
/// servers — on those servers too, not only on the head.
#[test]
fn postgres_timeout_and_cancel_stop_the_query_on_every_server() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    // The filter goes to the remote servers, which scan their rows for it.
    let slow = "SELECT count(*) AS aiq_part_probe FROM readings WHERE sensor < 0";
    let on_head = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%aiq_part_probe%' AND state = 'active' AND pid <> pg_backend_pid()";
    let on_remote =
        "SELECT count(*) FROM pg_stat_activity WHERE usename = 'link' AND state = 'active'";
    let sb = Sandbox::new();
    sb.write_config("[query]\ntimeout_secs = 2\n");
    let started = Instant::now();
    let out = exec(&sb, &pg.head.url(), slow);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ran longer than 2 s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(12));
    for remote in &pg.remotes {
        wait_for(
            remote,
            on_remote,
            "0",
            "the timed-out query still runs on a remote server",
        );
    }
    // Ctrl-C: the remotes are reading when it comes.
    let sb = Sandbox::new();
    let mut child = sb
        .std_aiq()
        .args([pg.head.url().as_str(), "-e", slow, "-f", "csv"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&pg.head, on_head, "1", "the query never started");
    wait_for(
        &pg.remotes[0],
        on_remote,
        "1",
        "the query never reached the remote server",
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let started = Instant::now();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10));
    wait_for(
        &pg.head,
        on_head,
        "0",
        "the cancelled query still runs on the head",
    );
    for remote in &pg.remotes {
        wait_for(
            remote,
            on_remote,
            "0",
            "the cancelled query still runs on a remote server",
        );
    }
}

/// A partition attached on the head shows in the next schema (the cache
/// follows), and the partition count with it.
#[test]
fn postgres_catalog_cache_follows_new_partitions() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    let sb = Sandbox::new();
    let url = pg.head.url();
    assert!(schema(&sb, &url).contains("100 partitions"));
    let entry = sb.only_cache_entry();
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, replace_bytes(&bytes, "readings", "readingz")).unwrap();
    assert!(
        schema(&sb, &url).contains("table readingz"),
        "the cache was not used"
    );
    pg.head.admin(
        "CREATE TABLE events_p100 PARTITION OF events FOR VALUES FROM ('2025-05-01') TO ('2025-06-01')",
    );
    let after = schema(&sb, &url);
    pg.head
        .admin("ALTER TABLE events DETACH PARTITION events_p100; DROP TABLE events_p100");
    assert!(
        after.contains("table readings"),
        "a stale cache was used:\n{after}"
    );
    assert!(after.contains("101 partitions"), "{after}");
    assert!(schema(&sb, &url).contains("100 partitions"));
}

/// Layer 2 on its own: in a read-only session the head refuses every
/// write through its foreign partitions, before anything reaches the
/// servers that hold them.
#[test]
fn postgres_writes_through_foreign_partitions_fail_on_the_server() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    let before = pg.snapshot();
    for write in [
        "DELETE FROM orders",
        "UPDATE orders SET total = 0 WHERE id = 5",
        "INSERT INTO orders VALUES (2, 1, 1.00, '2024-01-01', 'x')",
        "DELETE FROM orders_b",
        "TRUNCATE orders",
        "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d",
        "SELECT * FROM orders FOR UPDATE",
        "SET default_transaction_read_only = off; DELETE FROM orders",
    ] {
        let result = pg
            .head
            .as_login_read_only(&format!("BEGIN READ ONLY;\n{write};\nROLLBACK;"));
        let err = result.expect_err(&format!("the head ran {write}"));
        assert!(
            err.contains("read-only transaction") || err.contains("permission denied"),
            "{write}: {err}"
        );
    }
    // aiq refuses them itself too, also with --allow-write but no --yes.
    let sb = Sandbox::new();
    for flags in [&[][..], &["--allow-write"][..]] {
        let out = sb
            .aiq()
            .arg(pg.head.url())
            .args(flags)
            .args(["-e", "DELETE FROM orders"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    }
    let model = ModelServer::start(vec![Reply::Text(
        "```sql\nWITH gone AS (DELETE FROM orders WHERE id > 3 RETURNING id) SELECT count(*) FROM gone\n```"
            .into(),
    )]);
    let out = sb
        .aiq_with(&model, "openai")
        .arg(pg.head.url())
        .args(["-q", "drop the orders on the second server"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert_eq!(pg.snapshot(), before, "the data changed");
}

#[test]
fn postgres_partitions_hold_against_the_generated_corpus() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    let before = pg.snapshot();
    let findings = corpus(&pg.head.url(), Engine::Postgres);
    let after = pg.snapshot();
    let text = report(&findings);
    assert_eq!(after, before, "the data changed\n{text}");
    assert!(findings.is_empty(), "{text}");
}

/// A shard that does not answer: the schema still lists every table (the
/// one on the dead shard too, without what only its shard could say), the
/// others keep their samples, and they still answer.
#[test]
fn spider_schema_survives_a_shard_that_does_not_answer() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    let port = common::servers::free_port();
    sp.head.admin(&format!(
        "CREATE SERVER gone FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', PORT {port}, \
           USER 'link', PASSWORD '{LINK_PASSWORD}', DATABASE 'shop');
         CREATE TABLE ghost (id INT PRIMARY KEY, note VARCHAR(20)) ENGINE=SPIDER \
           COMMENT='wrapper \"mysql\", srv \"gone\", table \"ghost\"';"
    ));
    let sb = Sandbox::new();
    let started = Instant::now();
    let out = sb.aiq().args(["schema", &sp.head.url()]).output().unwrap();
    let took = started.elapsed();
    let count = exec(&sb, &sp.head.url(), "SELECT count(*) AS n FROM orders");
    sp.head.admin("DROP TABLE ghost; DROP SERVER gone;");
    let text = stdout_of(&out);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        text.contains("table ghost -- a Spider table on another server\n"),
        "{text}"
    );
    // The other tables keep their samples and keys.
    assert!(
        text.contains("status varchar(40) not null, e.g. 'cancelled', 'delivered', 'shipped'"),
        "{text}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(stdout_of(&count), "n\n6\n", "{}", stderr_of(&count));
}

/// A foreign server that does not answer: the schema still lists its
/// table, and tables read from the head itself keep their samples.
#[test]
fn postgres_schema_survives_a_server_that_does_not_answer() {
    let Some(pg) = shards::pg_parts() else { return };
    let _one = lock(&PG);
    let port = common::servers::free_port();
    pg.head.admin(&format!(
        "CREATE SERVER gone FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '{port}', dbname 'shop');
         CREATE USER MAPPING FOR PUBLIC SERVER gone OPTIONS (user 'link', password '{LINK_PASSWORD}');
         GRANT USAGE ON FOREIGN SERVER gone TO {user};
         SET ROLE {user};
         CREATE FOREIGN TABLE ghost (id int, note text) SERVER gone;
         CREATE TABLE fresh (id int, mood text);
         INSERT INTO fresh VALUES (1, 'calm'), (2, 'eager');",
        user = common::servers::USER
    ));
    let sb = Sandbox::new();
    let out = sb.aiq().args(["schema", &pg.head.url()]).output().unwrap();
    let count = exec(&sb, &pg.head.url(), "SELECT count(*) AS n FROM orders");
    pg.head
        .admin("DROP FOREIGN TABLE ghost; DROP TABLE fresh; DROP SERVER gone CASCADE;");
    let text = stdout_of(&out);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        text.contains("table ghost -- a foreign table on server gone\n"),
        "{text}"
    );
    assert!(
        text.contains("  mood text, e.g. 'calm', 'eager'\n"),
        "{text}"
    );
    assert_eq!(stdout_of(&count), "n\n6\n", "{}", stderr_of(&count));
}

/// Ctrl-C and the timeout while the shards themselves are busy (the
/// filter goes to them, and they scan billions of generated rows for it):
/// the head does not pass `KILL QUERY` on to a busy shard, so aiq stops
/// waiting a few seconds after asking, leaves that connection and makes a
/// new one — the next statement in the same process answers.
#[test]
fn spider_cancel_returns_while_the_shards_are_busy() {
    let Some(sp) = shards::spider() else { return };
    let _one = lock(&SPIDER);
    for shard in &sp.shards {
        shard.admin(
            "CREATE VIEW stream_rows AS SELECT seq AS id, seq % 7 AS v FROM seq_1_to_2000000000",
        );
    }
    sp.head.admin(
        "CREATE TABLE stream_rows (id BIGINT NOT NULL, v BIGINT NOT NULL) ENGINE=SPIDER \
         COMMENT='wrapper \"mysql\", table \"stream_rows\"' PARTITION BY HASH (id) \
         (PARTITION a COMMENT='srv \"shard0\"', PARTITION b COMMENT='srv \"shard1\"')",
    );
    let slow = "SELECT count(*) AS aiq_stream_probe FROM stream_rows WHERE v < 0";
    let on_head = "SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%aiq_stream_probe FROM%' AND id <> CONNECTION_ID()";
    let on_shard = "SELECT count(*) FROM information_schema.processlist WHERE user = 'link' AND command = 'Query' AND info LIKE '%stream_rows%'";
    let stop_everywhere = || {
        // The shards first: the head's statement ends when theirs do.
        for server in [&sp.shards[0], &sp.shards[1], &sp.head] {
            let ids = server.admin(
                "SELECT id FROM information_schema.processlist WHERE info LIKE '%stream_rows%' AND id <> CONNECTION_ID()",
            );
            for id in ids.split_whitespace() {
                server.admin(&format!("KILL QUERY {id}"));
            }
        }
    };
    // Ctrl-C.
    let sb = Sandbox::new();
    let mut child = sb
        .std_aiq()
        .args([sp.head.url().as_str(), "-e", slow, "-f", "csv"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&sp.head, on_head, "1", "the query never started");
    wait_for(
        &sp.shards[0],
        on_shard,
        "1",
        "the query never reached a shard",
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let started = Instant::now();
    let code = child.wait().unwrap().code();
    let cancelled_in = started.elapsed();
    stop_everywhere();
    // The timeout, then a statement on the same source in the same process.
    sb.write_config("[query]\ntimeout_secs = 1\n");
    let script = sb.path().join("after.lua");
    std::fs::write(
        &script,
        format!(
            "local ok, e = pcall(aiq.query, \"{slow}\")\nprint(ok, e)\n\
             local rows = aiq.query('SELECT count(*) AS n FROM orders')\nprint(rows[1].n)\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let out = sb
        .aiq()
        .arg(sp.head.url())
        .arg("--lua")
        .arg(&script)
        .output()
        .unwrap();
    let timed_out_in = started.elapsed();
    stop_everywhere();
    sp.head.admin("DROP TABLE stream_rows");
    for shard in &sp.shards {
        shard.admin("DROP VIEW stream_rows");
    }
    assert_eq!(code, Some(130));
    assert!(cancelled_in < Duration::from_secs(10), "{cancelled_in:?}");
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}{}", stderr_of(&out));
    assert!(
        text.contains("false") && text.contains("ran longer than 1 s"),
        "{text}"
    );
    assert!(text.ends_with("\n6\n"), "{text}");
    assert!(timed_out_in < Duration::from_secs(15), "{timed_out_in:?}");
}

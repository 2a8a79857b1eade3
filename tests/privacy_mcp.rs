//! MCP clients are told of a failed statement under the same rules as a
//! model (SPEC §4.3): an engine's error quoting a value of a redacted
//! column reaches them with the value masked.

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use common::Sandbox;
use serde_json::Value;

const EMAIL: &str = "ann@private.example";

#[test]
fn run_query_errors_do_not_quote_redacted_values() {
    let sb = Sandbox::new();
    let dir = sb.path().join("crm_csv");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("customers.csv"),
        format!("id,name,email\n1,Ann,{EMAIL}\n"),
    )
    .unwrap();
    sb.write_config(&format!(
        "[sources]\ndefault = \"crm\"\n[sources.crm]\nurl = \"{}\"\nredact = [\"customers.email\"]\n",
        dir.display()
    ));
    let mut child = sb
        .std_aiq()
        .args(["mcp", "crm"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"SELECT CAST(email AS INTEGER) AS n FROM customers"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"SELECT CAST(name AS INTEGER) AS n FROM customers"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "aiq ended");
        let v: Value = serde_json::from_str(&line).unwrap();
        if matches!(v["id"].as_i64(), Some(2 | 3)) {
            answers.push(v);
        }
    }
    drop(stdin);
    let _ = child.wait();
    let text = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let redacted = answers.iter().find(|v| v["id"] == 2).map(text).unwrap();
    assert!(!redacted.contains(EMAIL), "{redacted}");
    // Its kind only: an engine may put the value anywhere in its message.
    assert!(
        redacted.contains(
            "Conversion Error: (its message may hold values the statement read; not sent)"
        ),
        "{redacted}"
    );
    // A column that is not redacted keeps the engine's whole message.
    let plain = answers.iter().find(|v| v["id"] == 3).map(text).unwrap();
    assert!(plain.contains("Could not convert string 'Ann'"), "{plain}");
}

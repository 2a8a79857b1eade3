//! The stdio transport's frames checked before the SDK reads them: every
//! JSON-RPC request gets an answer. A line that is not JSON (invalid
//! UTF-8, a lone surrogate escape, cut short, nested past what a parser
//! follows) is answered with a parse error (-32700), one over
//! [`MAX_FRAME`] or not a request with an invalid request (-32600) — with
//! the request's `id` when it can be read, as JSON-RPC 2.0 says — and the
//! server goes on serving. Good lines pass to the SDK unchanged; its
//! answers and these errors reach stdout a whole line at a time.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// The longest frame read; a longer one is answered and skipped.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;
/// How deep a frame's JSON may nest.
const MAX_DEPTH: usize = 128;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the SDK.
    Pass(Passed),
    /// Answer it with this error response (one JSON line); nothing else.
    Answer(String),
    /// Drop it silently (an invalid notification: nothing may answer it).
    Drop,
}

/// What a frame handed to the SDK means for the requests in flight.
#[derive(Debug, PartialEq, Default)]
pub struct Passed {
    /// A request's id, as [`id_key`] writes it.
    pub id: Option<String>,
    /// The id of the request a `notifications/cancelled` gives up on (the
    /// SDK does not answer it).
    pub cancels: Option<String>,
}

/// The ids of requests passed to the SDK and not answered yet: a second
/// request with one of them is answered at once (the SDK would answer only
/// one of the two).
pub type InFlight = Arc<Mutex<HashSet<String>>>;

/// An answer's `id`: a value, or a request's id exactly as it was written
/// (an integer too long for a number type keeps all its digits).
#[derive(Serialize)]
#[serde(untagged)]
enum Id<'a> {
    Value(Value),
    Raw(&'a RawValue),
}

#[derive(Serialize)]
struct ErrorAnswer<'a> {
    jsonrpc: &'static str,
    id: Id<'a>,
    error: Value,
}

fn answer_with(id: Id<'_>, code: i64, message: &str) -> String {
    serde_json::to_string(&ErrorAnswer {
        jsonrpc: "2.0",
        id,
        error: json!({"code": code, "message": message}),
    })
    .unwrap_or_default()
}

fn error(id: Value, code: i64, message: &str) -> String {
    answer_with(Id::Value(id), code, message)
}

/// A JSON object's members in order, values unread, repeated keys kept.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Each)
    }
}

/// How a request's `id` reads.
enum IdRead<'a> {
    /// A string or an integer the SDK takes: its [`id_key`].
    Good(String),
    /// Present but not one the SDK takes: why, and what to echo.
    Bad(&'static str, Id<'a>),
}

/// The key an id is known by while its request is answered.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) => n.as_i64().map(|n| format!("n:{n}")),
        _ => None,
    }
}

fn read_id(raw: &RawValue) -> IdRead<'_> {
    let text = raw.get();
    let integer = {
        let digits = text.strip_prefix('-').unwrap_or(text);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::String(_)) => IdRead::Good(id_key(&v).unwrap_or_default()),
        Ok(v @ Value::Number(_)) if integer && v.as_i64().is_some() => {
            IdRead::Good(id_key(&v).unwrap_or_default())
        }
        _ if integer => IdRead::Bad(
            "`id` must be a string or an integer of at most 64 bits",
            Id::Raw(raw),
        ),
        Ok(v @ Value::Number(_)) => {
            IdRead::Bad("`id` must be a string or an integer", Id::Value(v))
        }
        _ => IdRead::Bad(
            "`id` must be a string or an integer",
            Id::Value(Value::Null),
        ),
    }
}

/// Judges one frame (without its line end).
pub fn judge(line: &[u8]) -> Verdict {
    if line.len() > MAX_FRAME {
        return Verdict::Answer(error(
            Value::Null,
            -32600,
            &format!("invalid request: the message is over {MAX_FRAME} bytes"),
        ));
    }
    // A byte order mark some writers put first is not part of the JSON.
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Answer(error(
            Value::Null,
            -32700,
            "parse error: the message is not UTF-8",
        ));
    };
    if crate::nesting::past(text.as_bytes(), MAX_DEPTH).is_some() {
        return Verdict::Answer(error(
            Value::Null,
            -32700,
            &format!("parse error: the JSON nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    match text.trim_start().as_bytes().first() {
        Some(b'{') => object(text),
        Some(b'[') => batch(text),
        _ => match serde_json::from_str::<Value>(text) {
            Ok(_) => Verdict::Answer(error(
                Value::Null,
                -32600,
                "invalid request: a message is a JSON object",
            )),
            Err(e) => Verdict::Answer(error(Value::Null, -32700, &format!("parse error: {e}"))),
        },
    }
}

/// A batch: not part of MCP since its 2025-06-18 revision, and the SDK
/// takes none. Each request in it is answered with its id.
fn batch(text: &str) -> Verdict {
    let items: Vec<Box<RawValue>> = match serde_json::from_str(text) {
        Ok(items) => items,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    if items.is_empty() {
        return Verdict::Answer(error(
            Value::Null,
            -32600,
            "invalid request: an empty batch",
        ));
    }
    let why = "invalid request: batches are not taken; send one message per line";
    let mut answers = Vec::new();
    for item in &items {
        let Ok(Members(members)) = serde_json::from_str::<Members>(item.get()) else {
            answers.push(error(Value::Null, -32600, why));
            continue;
        };
        let id = members.iter().find(|(k, _)| k == "id").map(|(_, v)| v);
        let is_request = members.iter().any(|(k, _)| k == "method");
        match id {
            Some(raw) if is_request => answers.push(match read_id(raw) {
                IdRead::Good(_) => answer_with(Id::Raw(raw), -32600, why),
                IdRead::Bad(_, echo) => answer_with(echo, -32600, why),
            }),
            // A notification in a batch gets no answer; a response in
            // one is not ours to answer either.
            _ => {}
        }
    }
    if answers.is_empty() {
        Verdict::Drop
    } else {
        Verdict::Answer(format!("[{}]", answers.join(",")))
    }
}

/// Checks a single message's shape.
fn object(text: &str) -> Verdict {
    let members = match serde_json::from_str::<Members>(text) {
        Ok(Members(members)) => members,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    let twice = keys.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]);
    let raw_id = members.iter().find(|(k, _)| k == "id").map(|(_, v)| &**v);
    let id = raw_id.map(read_id);
    let echo = match (&id, raw_id) {
        (Some(IdRead::Good(_)), Some(raw)) if twice != Some("id") => Id::Raw(raw),
        _ => Id::Value(Value::Null),
    };
    let invalid = |echo: Id<'_>, why: &str| {
        Verdict::Answer(answer_with(
            echo,
            -32600,
            &format!("invalid request: {why}"),
        ))
    };
    if let Some(key) = twice {
        return invalid(echo, &format!("`{key}` appears twice"));
    }
    let map: serde_json::Map<String, Value> = match serde_json::from_str(text) {
        Ok(map) => map,
        // Well-formed, but a number no number type holds (`1e400`).
        Err(e) if e.to_string().starts_with("number out of range") => {
            return match id {
                None => Verdict::Drop,
                Some(IdRead::Bad(why, bad)) => invalid(bad, why),
                Some(IdRead::Good(_)) => {
                    Verdict::Answer(answer_with(echo, -32602, &format!("invalid params: {e}")))
                }
            };
        }
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let echo = match id {
            Some(IdRead::Bad(_, bad)) => bad,
            _ => echo,
        };
        return invalid(echo, "`jsonrpc` must be \"2.0\"");
    }
    let is_response = map.contains_key("result") || map.contains_key("error");
    if is_response {
        return Verdict::Pass(Passed::default());
    }
    let key = match id {
        None => None,
        Some(IdRead::Good(key)) => Some(key),
        Some(IdRead::Bad(why, bad)) => return invalid(bad, why),
    };
    let Some(method) = map.get("method") else {
        return invalid(echo, "no `method`");
    };
    let Some(method) = method.as_str() else {
        return invalid(echo, "`method` must be a string");
    };
    let bad_params = |why: String| {
        if key.is_none() {
            // A notification is never answered.
            Verdict::Drop
        } else {
            Verdict::Answer(answer_with(
                Id::Raw(raw_id.expect("a request's id")),
                -32602,
                &format!("invalid params: {why}"),
            ))
        }
    };
    let params = match map.get("params") {
        None => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => return bad_params("`params` must be an object".into()),
    };
    if let Some(why) = params_fault(method, params) {
        return bad_params(why);
    }
    let cancels = (method == "notifications/cancelled")
        .then(|| params.and_then(|p| p.get("requestId")).and_then(id_key))
        .flatten();
    Verdict::Pass(Passed { id: key, cancels })
}

/// What is wrong with the `params` of a method aiq serves, when the SDK
/// would only say the method was not found.
fn params_fault(method: &str, params: Option<&serde_json::Map<String, Value>>) -> Option<String> {
    let empty = serde_json::Map::new();
    let params = params.unwrap_or(&empty);
    if let Some(meta) = params.get("_meta") {
        if !meta.is_object() {
            return Some("`_meta` must be an object".into());
        }
    }
    let string = |key: &str| match params.get(key) {
        Some(Value::String(_)) => None,
        Some(_) => Some(format!("{method}: `{key}` must be a string")),
        None => Some(format!("{method} needs `{key}`, a string")),
    };
    let object = |key: &str| match params.get(key) {
        Some(Value::Object(_)) => None,
        Some(_) => Some(format!("{method}: `{key}` must be an object")),
        None => Some(format!("{method} needs `{key}`, an object")),
    };
    match method {
        "initialize" => string("protocolVersion")
            .or_else(|| object("capabilities"))
            .or_else(|| object("clientInfo"))
            .or_else(|| {
                let info = params.get("clientInfo")?;
                ["name", "version"].into_iter().find_map(|key| {
                    (!info.get(key).is_some_and(Value::is_string))
                        .then(|| format!("initialize: `clientInfo.{key}` must be a string"))
                })
            }),
        "tools/call" => string("name").or_else(|| match params.get("arguments") {
            None | Some(Value::Null | Value::Object(_)) => None,
            Some(_) => Some("tools/call: `arguments` must be an object".into()),
        }),
        "resources/read" => string("uri"),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            match params.get("cursor") {
                None | Some(Value::Null | Value::String(_)) => None,
                Some(_) => Some(format!("{method}: `cursor` must be a string")),
            }
        }
        _ => None,
    }
}

/// Reads the client's frames from `input`: good ones go to `to_sdk`,
/// answers to bad ones to `answers`. Returns at the end of input (the
/// SDK's side is closed then, so it sees the end too).
pub async fn read_in<R, W>(
    input: R,
    mut to_sdk: W,
    answers: UnboundedSender<String>,
    in_flight: InFlight,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    let mut over = false;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(chunk) => chunk,
            Err(e) => {
                tracing::info!("stdin failed: {e}");
                break;
            }
        };
        if chunk.is_empty() {
            if !line.is_empty() || over {
                deliver(&line, over, &mut to_sdk, &answers, &in_flight).await;
            }
            break;
        }
        let (part, ends) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (&chunk[..at], Some(at + 1)),
            None => (chunk, None),
        };
        if !over {
            if line.len() + part.len() > MAX_FRAME {
                // Too long: not kept; what is left of it is skipped.
                over = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
        }
        let used = ends.unwrap_or(chunk.len());
        reader.consume(used);
        if ends.is_some() {
            if !deliver(&line, over, &mut to_sdk, &answers, &in_flight).await {
                break;
            }
            line.clear();
            over = false;
        }
    }
    let _ = to_sdk.shutdown().await;
}

/// One whole frame: passed on, answered, or dropped. False when the SDK's
/// side is gone.
async fn deliver<W: AsyncWrite + Unpin>(
    line: &[u8],
    over: bool,
    to_sdk: &mut W,
    answers: &UnboundedSender<String>,
    in_flight: &InFlight,
) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) && !over {
        return true;
    }
    let verdict = if over {
        Verdict::Answer(error(
            Value::Null,
            -32600,
            &format!("invalid request: the message is over {MAX_FRAME} bytes"),
        ))
    } else {
        judge(line)
    };
    let verdict = match verdict {
        Verdict::Pass(passed) => in_flight_check(passed, in_flight),
        other => other,
    };
    match verdict {
        Verdict::Pass(_) => {
            let sent = async {
                to_sdk.write_all(line).await?;
                to_sdk.write_all(b"\n").await?;
                to_sdk.flush().await
            };
            sent.await.is_ok()
        }
        Verdict::Answer(text) => {
            tracing::info!("answered a bad frame: {text}");
            answers.send(text).is_ok()
        }
        Verdict::Drop => true,
    }
}

/// Notes a passed request's id as in flight, or answers it when a request
/// with the same id is not answered yet; a cancellation ends its request's.
fn in_flight_check(passed: Passed, in_flight: &InFlight) -> Verdict {
    let Ok(mut ids) = in_flight.lock() else {
        return Verdict::Pass(passed);
    };
    if let Some(cancelled) = &passed.cancels {
        ids.remove(cancelled);
    }
    if let Some(id) = &passed.id {
        if !ids.insert(id.clone()) {
            let (echo, shown) = match id.split_at(2) {
                ("n:", n) => (
                    n.parse::<i64>().map(Value::from).unwrap_or(Value::Null),
                    n.to_string(),
                ),
                (_, s) => (Value::from(s), format!("{s:?}")),
            };
            return Verdict::Answer(error(
                echo,
                -32600,
                &format!(
                    "invalid request: id {shown} is in use by a request not answered yet; \
                     give each request its own id"
                ),
            ));
        }
    }
    Verdict::Pass(passed)
}

/// The id a line the SDK wrote answers, as [`id_key`] writes it; `None`
/// for its requests and notifications.
fn answered_id(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Out<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        method: Option<&'a RawValue>,
    }
    let text = std::str::from_utf8(line).ok()?;
    let out: Out<'_> = serde_json::from_str(text.trim_end()).ok()?;
    if out.method.is_some() {
        return None;
    }
    id_key(&serde_json::from_str(out.id?.get()).ok()?)
}

/// Writes the SDK's lines (read from `from_sdk`) and the answers to bad
/// frames to `out`, a whole line at a time, until both have ended; an
/// answered request's id leaves `in_flight`.
pub async fn write_out<R, W>(
    from_sdk: R,
    mut answers: UnboundedReceiver<String>,
    mut out: W,
    in_flight: InFlight,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(from_sdk);
    let mut line = Vec::new();
    let mut sdk_open = true;
    let mut answers_open = true;
    while sdk_open || answers_open {
        tokio::select! {
            read = lines.read_until(b'\n', &mut line), if sdk_open => {
                match read {
                    Ok(0) | Err(_) => sdk_open = false,
                    Ok(_) => {
                        if let Some(id) = answered_id(&line) {
                            if let Ok(mut ids) = in_flight.lock() {
                                ids.remove(&id);
                            }
                        }
                        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                            return;
                        }
                        line.clear();
                    }
                }
            }
            answer = answers.recv(), if answers_open => {
                match answer {
                    None => answers_open = false,
                    Some(text) => {
                        let mut bytes = text.into_bytes();
                        bytes.push(b'\n');
                        if out.write_all(&bytes).await.is_err() || out.flush().await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Answer(text) => serde_json::from_str(&text).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn bad_frames_get_the_errors_json_rpc_names() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"pi"#,
            "not json",
        ] {
            let a = answer(line);
            assert_eq!(a["error"]["code"], -32700, "{line}: {a}");
            assert_eq!(a["id"], Value::Null);
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(answer(&deep)["error"]["code"], -32700);
        assert!(matches!(judge(b"{\"a\":\xff}"), Verdict::Answer(t) if t.contains("-32700")));
        // The id comes back when it can be read.
        let a = answer(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        for params in [r#""x""#, "5", "[]"] {
            let a = answer(&format!(
                r#"{{"jsonrpc":"2.0","id":"q","method":"tools/list","params":{params}}}"#
            ));
            assert_eq!(
                (a["id"].clone(), a["error"]["code"].clone()),
                (json!("q"), json!(-32602)),
                "{params}"
            );
        }
        let a = answer(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(1.5), json!(-32600))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        assert_eq!(answer("5")["error"]["code"], -32600);
        // Good ones pass; an invalid notification gets no answer.
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Pass(Passed {
                id: Some("n:1".into()),
                cancels: None
            })
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            Verdict::Drop
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Verdict::Pass(Passed::default())
        );
    }

    /// What the SDK would answer without an id, or as a method it does not
    /// know, is answered here with the request's id and the fault named.
    #[test]
    fn the_id_comes_back_exactly_and_the_fault_is_named() {
        let cases: [(&str, &str, i64, &str); 12] = [
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
                "18446744073709551615",
                -32600,
                "at most 64 bits",
            ),
            (
                r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#,
                "123456789012345678901234567890",
                -32600,
                "at most 64 bits",
            ),
            (
                r#"{"jsonrpc":"2.0","id":16,"id":17,"method":"ping"}"#,
                "null",
                -32600,
                "`id` appears twice",
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"ping","method":"x"}"#,
                "5",
                -32600,
                "`method` appears twice",
            ),
            (
                r#"{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":5}}"#,
                "13",
                -32602,
                "`_meta` must be an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{}}"#,
                "11",
                -32602,
                "tools/call needs `name`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"run_query","arguments":5}}"#,
                r#""c""#,
                -32602,
                "`arguments` must be an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{}}"#,
                "21",
                -32602,
                "resources/read needs `uri`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":22,"method":"initialize","params":{}}"#,
                "22",
                -32602,
                "initialize needs `protocolVersion`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":23,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x"}}}"#,
                "23",
                -32602,
                "`clientInfo.version`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"run_query","arguments":{"x":1e400}}}"#,
                "20",
                -32602,
                "number out of range",
            ),
            (
                r#"{"jsonrpc":"2.0","id":24,"method":"tools/list","params":{"cursor":5}}"#,
                "24",
                -32602,
                "`cursor` must be a string",
            ),
        ];
        for (line, id, code, says) in cases {
            let Verdict::Answer(text) = judge(line.as_bytes()) else {
                panic!("{line}: passed");
            };
            assert!(text.contains(&format!("\"id\":{id}")), "{line}: {text}");
            let a: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(a["error"]["code"], code, "{line}: {a}");
            assert!(
                a["error"]["message"].as_str().unwrap().contains(says),
                "{line}: {a}"
            );
        }
        // A byte order mark first is not part of the JSON.
        assert!(matches!(
            judge(b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"ping\"}"),
            Verdict::Pass(_)
        ));
        // A notification with bad params gets nothing.
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":1}}"#),
            Verdict::Drop
        );
    }

    /// A batch is answered request by request, each with its own id; a
    /// batch of notifications gets nothing.
    #[test]
    fn a_batch_is_answered_with_each_id() {
        let Verdict::Answer(text) = judge(
            br#"[{"jsonrpc":"2.0","id":14,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"ping"},7]"#,
        ) else {
            panic!("passed");
        };
        let a: Value = serde_json::from_str(&text).unwrap();
        let ids: Vec<Value> = a
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].clone())
            .collect();
        assert_eq!(ids, vec![json!(14), json!("b"), Value::Null]);
        assert!(text.contains("one message per line"), "{text}");
        assert_eq!(
            judge(br#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#),
            Verdict::Drop
        );
        assert_eq!(answer("[]")["error"]["code"], -32600);
    }

    /// A second request with the id of one not answered yet is refused;
    /// once the first is answered (or cancelled) the id is free again.
    #[test]
    fn an_id_in_flight_is_not_taken_twice() {
        let in_flight = InFlight::default();
        let ping = |id: &str| {
            judge(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes())
        };
        let Verdict::Pass(first) = ping("3") else {
            panic!()
        };
        assert!(matches!(
            in_flight_check(first, &in_flight),
            Verdict::Pass(_)
        ));
        let Verdict::Pass(again) = ping("3") else {
            panic!()
        };
        let Verdict::Answer(text) = in_flight_check(again, &in_flight) else {
            panic!("taken twice")
        };
        assert!(
            text.contains("id 3 is in use") && text.contains("\"id\":3"),
            "{text}"
        );
        // A string id "3" is another id.
        let Verdict::Pass(s) = ping(r#""3""#) else {
            panic!()
        };
        assert!(matches!(in_flight_check(s, &in_flight), Verdict::Pass(_)));
        // Answered: free again.
        let key = answered_id(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n").unwrap();
        in_flight.lock().unwrap().remove(&key);
        let Verdict::Pass(third) = ping("3") else {
            panic!()
        };
        assert!(matches!(
            in_flight_check(third, &in_flight),
            Verdict::Pass(_)
        ));
        // Cancelled: free again.
        let Verdict::Pass(cancel) = judge(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        ) else {
            panic!()
        };
        assert!(matches!(
            in_flight_check(cancel, &in_flight),
            Verdict::Pass(_)
        ));
        let Verdict::Pass(fourth) = ping("3") else {
            panic!()
        };
        assert!(matches!(
            in_flight_check(fourth, &in_flight),
            Verdict::Pass(_)
        ));
        // The SDK's own requests to the client are not answers.
        assert_eq!(
            answered_id(br#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#),
            None
        );
    }

    #[test]
    fn a_frame_over_the_limit_is_answered_and_the_next_passes() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut input = vec![b'x'; MAX_FRAME + 10];
            input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let mut passed = Vec::new();
            read_in(&input[..], &mut passed, tx, InFlight::default()).await;
            let answered = rx.recv().await.unwrap();
            assert!(
                answered.contains("-32600") && answered.contains("over"),
                "{answered}"
            );
            assert_eq!(
                passed,
                b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
            );
        });
    }
}

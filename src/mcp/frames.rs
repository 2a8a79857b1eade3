//! The stdio transport's frames checked before the SDK reads them: every
//! JSON-RPC request gets an answer. A line that is not JSON (invalid
//! UTF-8, a lone surrogate escape, cut short, nested past what a parser
//! follows) is answered with a parse error (-32700), one over
//! [`MAX_FRAME`] or not a request with an invalid request (-32600) — with
//! the request's `id` when it can be read, as JSON-RPC 2.0 says — and the
//! server goes on serving. Good lines pass to the SDK unchanged; its
//! answers and these errors reach stdout a whole line at a time.

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
    Pass,
    /// Answer it with this error response (one JSON line); nothing else.
    Answer(String),
    /// Drop it silently (an invalid notification: nothing may answer it).
    Drop,
}

fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
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
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Answer(error(
            Value::Null,
            -32700,
            "parse error: the message is not UTF-8",
        ));
    };
    if depth(text) > MAX_DEPTH {
        return Verdict::Answer(error(
            Value::Null,
            -32700,
            &format!("parse error: the JSON nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    match &value {
        // A batch: the SDK answers what it takes of one.
        Value::Array(items) if !items.is_empty() => Verdict::Pass,
        Value::Object(map) => request(map),
        _ => Verdict::Answer(error(
            Value::Null,
            -32600,
            "invalid request: a message is a JSON object",
        )),
    }
}

/// Checks a single message's shape.
fn request(map: &serde_json::Map<String, Value>) -> Verdict {
    let id = map.get("id");
    // What the answer may say the id was: a string or number, else null.
    let echo = match id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let invalid = |why: &str| {
        Verdict::Answer(error(
            echo.clone(),
            -32600,
            &format!("invalid request: {why}"),
        ))
    };
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    let is_response = map.contains_key("result") || map.contains_key("error");
    if is_response {
        return Verdict::Pass;
    }
    match id {
        None => {}
        Some(Value::String(_)) => {}
        Some(Value::Number(n)) if n.as_i64().is_some() => {}
        Some(_) => return invalid("`id` must be a string or an integer"),
    }
    let Some(method) = map.get("method") else {
        return invalid("no `method`");
    };
    if !method.is_string() {
        return invalid("`method` must be a string");
    }
    match map.get("params") {
        None | Some(Value::Object(_)) => Verdict::Pass,
        // A notification is never answered.
        Some(_) if id.is_none() => Verdict::Drop,
        Some(_) => Verdict::Answer(error(
            echo,
            -32602,
            "invalid params: `params` must be an object",
        )),
    }
}

/// How deep `text`'s brackets nest, strings left out.
fn depth(text: &str) -> usize {
    let (mut now, mut most, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                now += 1;
                most = most.max(now);
            }
            b']' | b'}' => now = now.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// Reads the client's frames from `input`: good ones go to `to_sdk`,
/// answers to bad ones to `answers`. Returns at the end of input (the
/// SDK's side is closed then, so it sees the end too).
pub async fn read_in<R, W>(input: R, mut to_sdk: W, answers: UnboundedSender<String>)
where
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
                deliver(&line, over, &mut to_sdk, &answers).await;
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
            if !deliver(&line, over, &mut to_sdk, &answers).await {
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
) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
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
    match verdict {
        Verdict::Pass => {
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

/// Writes the SDK's lines (read from `from_sdk`) and the answers to bad
/// frames to `out`, a whole line at a time, until both have ended.
pub async fn write_out<R, W>(from_sdk: R, mut answers: UnboundedReceiver<String>, mut out: W)
where
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
            Verdict::Pass
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            Verdict::Drop
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Verdict::Pass
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
            read_in(&input[..], &mut passed, tx).await;
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

//! The protocol side of `aiq mcp`: an rmcp [`ServerHandler`] over the
//! [`Tools`]. Each call runs on a blocking thread under its own
//! [`CancelToken`] — cancelled by `notifications/cancelled`, by the per-call
//! timeout, or when the client goes away — once the [`CallQueue`] gives it
//! a turn, and is written to the audit log with the time it waited. A write asks the client (see
//! [`super::consent`]). Whatever happens inside a call ends as a tool error;
//! the server goes on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::audit::{AuditLog, Record};
use super::consent::{confirm_params, statement_key, ConsentPlan, CONFIRM_KEY};
use super::queue::{CallQueue, QueueLimits};
use super::tools::{Reply, Tools};
use crate::cancel::CancelToken;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    Implementation, InputRequest, InputRequests, InputRequiredResult, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

/// Limits on calls.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A call running longer is stopped.
    pub timeout: Duration,
    /// Calls running at once, and how many may wait for how long.
    pub queue: QueueLimits,
}

/// What a call asked for, for the audit log.
#[derive(Debug, Default)]
struct Asked {
    source: Option<String>,
    sql: Option<String>,
    question: Option<String>,
}

impl Asked {
    fn of(args: &JsonObject, default: Option<&str>) -> Self {
        let text = |key: &str| args.get(key).and_then(|v| v.as_str()).map(str::to_string);
        Asked {
            source: text("source").or_else(|| default.map(str::to_string)),
            sql: text("sql"),
            question: text("question"),
        }
    }
}

/// A call's place among those in flight; dropping it takes the call off.
struct Listed {
    inflight: Arc<InFlight>,
    id: u64,
}

impl Drop for Listed {
    fn drop(&mut self) {
        self.inflight.remove(self.id);
    }
}

/// The tokens of the calls in flight, so that all of them can be stopped
/// when the client goes away.
#[derive(Default)]
pub struct InFlight {
    next: AtomicU64,
    calls: Mutex<HashMap<u64, CancelToken>>,
}

impl InFlight {
    /// Lists a call until the returned guard is dropped (its work ended,
    /// or its wait: a call whose session ends while it waits is dropped).
    fn add(self: &Arc<Self>, token: &CancelToken) -> Listed {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(id, token.clone());
        }
        Listed {
            inflight: Arc::clone(self),
            id,
        }
    }

    fn remove(&self, id: u64) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.remove(&id);
        }
    }

    /// Cancels every call in flight (their statements stop).
    pub fn cancel_all(&self) {
        let tokens: Vec<CancelToken> = match self.calls.lock() {
            Ok(calls) => calls.values().cloned().collect(),
            Err(_) => return,
        };
        for t in tokens {
            t.cancel();
        }
    }

    /// How many calls are still in flight (running, or waiting their turn).
    pub fn running(&self) -> usize {
        self.calls.lock().map(|c| c.len()).unwrap_or(0)
    }
}

struct Shared {
    tools: Tools,
    limits: Limits,
    queue: CallQueue,
    audit: AuditLog,
    inflight: Arc<InFlight>,
}

/// The MCP server: cheap to clone (one per HTTP session), one state.
#[derive(Clone)]
pub struct AiqServer(Arc<Shared>);

impl AiqServer {
    pub fn new(tools: Tools, limits: Limits, audit: AuditLog) -> Self {
        AiqServer(Arc::new(Shared {
            tools,
            queue: CallQueue::new(limits.queue),
            limits,
            audit,
            inflight: Arc::new(InFlight::default()),
        }))
    }

    /// The calls in flight (to stop them when the transport closes).
    pub fn inflight(&self) -> Arc<InFlight> {
        Arc::clone(&self.0.inflight)
    }

    /// Runs `work` on a blocking thread once the queue gives it a turn,
    /// cancelled by `stop` or the timeout, and writes the audit record (with what the
    /// call asked for when it ended before saying what it did).
    async fn run_call(
        &self,
        tool: &str,
        asked: Asked,
        stop: tokio_util::sync::CancellationToken,
        work: impl FnOnce(&Tools, &CancelToken) -> Reply + Send + 'static,
    ) -> Reply {
        let at = chrono::Utc::now();
        let started = Instant::now();
        let (mut reply, waited) = self.limited(stop, work).await;
        if reply.source.is_none() {
            reply.source = asked.source;
        }
        if reply.sql.is_none() {
            reply.sql = asked.sql;
        }
        let record = Record::of(at, tool, asked.question, &reply, started.elapsed()).waited(waited);
        self.0.audit.write(&record, at);
        reply
    }

    /// Waits for a turn in the queue, then runs `work`; the reply and how
    /// long the call waited.
    async fn limited(
        &self,
        stop: tokio_util::sync::CancellationToken,
        work: impl FnOnce(&Tools, &CancelToken) -> Reply + Send + 'static,
    ) -> (Reply, Duration) {
        let token = CancelToken::new();
        // Waiting calls are in flight too: a client that goes away takes
        // them out of the queue.
        let listed = self.0.inflight.add(&token);
        // `notifications/cancelled` (or the end of the session) cancels the call.
        let bridge = {
            let token = token.clone();
            tokio::spawn(async move {
                stop.cancelled().await;
                token.cancel();
            })
        };
        let queued_at = Instant::now();
        let reply = match self.0.queue.enter(&token).await {
            Ok(turn) => {
                let waited = turn.waited;
                (self.run_turn(turn, listed, &token, work).await, waited)
            }
            Err(refused) => {
                drop(listed);
                (Reply::error(refused.message()), queued_at.elapsed())
            }
        };
        bridge.abort();
        reply
    }

    /// Runs `work` on a blocking thread under the call timeout; the turn
    /// goes back to the queue when the work ends.
    async fn run_turn(
        &self,
        turn: super::queue::Turn,
        listed: Listed,
        token: &CancelToken,
        work: impl FnOnce(&Tools, &CancelToken) -> Reply + Send + 'static,
    ) -> Reply {
        let shared = Arc::clone(&self.0);
        let call_token = token.clone();
        let task = tokio::task::spawn_blocking(move || {
            let reply = work(&shared.tools, &call_token);
            drop(listed);
            drop(turn);
            reply
        });
        let timeout = self.0.limits.timeout;
        let reply = match tokio::time::timeout(timeout, task).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(e)) => {
                tracing::error!("a tool call failed: {e}");
                Reply::error("internal error: the call failed inside aiq (please report it, with the aiq -v log); the server goes on")
            }
            Err(_) => {
                token.cancel();
                Reply::error(format!(
                    "stopped: the call ran longer than {} s (the server's limit, [mcp] timeout_secs); narrow the query",
                    timeout.as_secs()
                ))
            }
        };
        if token.is_cancelled() && !reply.is_error {
            return Reply::error("cancelled");
        }
        reply
    }
}

/// A reply as a tool result: text, structured content, error flag.
fn tool_result(reply: Reply) -> CallToolResult {
    let mut result = if reply.is_error {
        CallToolResult::error(vec![ContentBlock::text(reply.text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(reply.text)])
    };
    result.structured_content = reply.structured;
    result
}

impl ServerHandler for AiqServer {
    fn get_info(&self) -> ServerConfig {
        let names: Vec<&str> = self
            .0
            .tools
            .served
            .entries()
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new("aiq", env!("CARGO_PKG_VERSION"))
                .with_title("aiq — safe SQL access to your data"),
        )
        .with_instructions(format!(
            "aiq serves these data sources: {}. Call describe_schema before writing SQL, then run_query with one statement in the dialect it names. Every statement is checked by aiq's read-only gate{}; results are capped and `truncated` says when rows were left out.",
            names.join(", "),
            if self.0.tools.allow_write {
                " (this server allows writes, each confirmed by the user)"
            } else {
                ""
            }
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.0.tools.list()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.0.tools.list().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !self.0.tools.has(&name) {
            let known: Vec<String> = self
                .0
                .tools
                .list()
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{name}' (the tools are {})", known.join(", ")),
                None,
            ));
        }
        let args = request.arguments.clone().unwrap_or_default();
        let asked = Asked::of(&args, self.0.tools.served.default_name());
        let source = asked.source.clone().unwrap_or_else(|| "the source".into());
        let plan = ConsentPlan::new(self.0.tools.allow_write, &request, &context, source);
        let tool = name.clone();
        let reply = self
            .run_call(&name, asked, context.ct.clone(), move |tools, cancel| {
                let mut consent = plan.into_consent(cancel);
                tools.call(&tool, args, cancel, consent.as_mut())
            })
            .await;
        if let Some(sql) = &reply.ask_next_round {
            let mut requests = InputRequests::new();
            let source = reply.source.clone().unwrap_or_default();
            requests.insert(
                CONFIRM_KEY.to_string(),
                InputRequest::Elicitation(ElicitRequest::new(confirm_params(&source, sql))),
            );
            let round = InputRequiredResult::new(Some(requests), Some(statement_key(sql)));
            return Ok(round.into());
        }
        Ok(tool_result(reply).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .0
            .tools
            .served
            .entries()
            .iter()
            .filter(|e| e.problem().is_none())
            .map(|e| {
                Resource::new(schema_uri(&e.name), format!("{} schema", e.name))
                    .with_description(format!(
                        "Tables, columns, keys and sample values of {} ({}), as aiq's model sees them",
                        e.name,
                        e.engine.map(|k| k.as_str()).unwrap_or("?")
                    ))
                    .with_mime_type("text/plain")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let Some(name) = source_of_uri(&uri) else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {uri}: aiq's resources are aiq://SOURCE/schema"),
                None,
            ));
        };
        if self.0.tools.served.pick(Some(&name)).is_err() {
            return Err(ErrorData::resource_not_found(
                format!("no resource {uri}: no source named '{name}' is served"),
                None,
            ));
        }
        let reply = self
            .run_call(
                "resources/read",
                Asked {
                    source: Some(name.clone()),
                    ..Asked::default()
                },
                context.ct.clone(),
                move |tools, _| {
                    let mut reply = match tools.served.pick(Some(&name)) {
                        Ok(entry) => match tools.schema_text(entry, None) {
                            Ok(text) => Reply {
                                text,
                                ..Reply::default()
                            },
                            Err(why) => Reply::error(why),
                        },
                        Err(why) => Reply::error(why),
                    };
                    reply.source = Some(name);
                    reply
                },
            )
            .await;
        if reply.is_error {
            return Err(ErrorData::internal_error(reply.text, None));
        }
        let contents = ResourceContents::text(reply.text, uri).with_mime_type("text/plain");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// `aiq://NAME/schema`.
pub fn schema_uri(name: &str) -> String {
    format!("aiq://{name}/schema")
}

/// The source a schema URI names.
fn source_of_uri(uri: &str) -> Option<String> {
    let name = uri.strip_prefix("aiq://")?.strip_suffix("/schema")?;
    (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_their_source() {
        assert_eq!(source_of_uri(&schema_uri("shop")).as_deref(), Some("shop"));
        assert_eq!(source_of_uri("aiq://a/b/schema"), None);
        assert_eq!(source_of_uri("file:///etc/passwd"), None);
        assert_eq!(source_of_uri("aiq:///schema"), None);
    }
}

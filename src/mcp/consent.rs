//! Consent to a write, asked of the MCP client: the runner's confirmation
//! (`Event::Confirm`) becomes an elicitation — a form with the statement
//! and one `run` box — sent as a request to the client (protocols up to
//! 2025-11-25) or, on 2026-07-28, which has no requests from server to
//! client, as an input-required round whose retry carries the answer.
//! Only an accepted form with `run` ticked says yes.

use rmcp::model::{
    BooleanSchema, CallToolRequestParams, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, PrimitiveSchemaDefinition, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{Peer, RoleServer};

use super::result::{Consent, Decision, Fixed};
use crate::cancel::CancelToken;

/// The key of the write confirmation in an input-required round.
pub const CONFIRM_KEY: &str = "confirm_write";

/// How a call's write is confirmed, from the protocol version, the
/// client's capabilities and (2026-07-28) the answer of an earlier round.
pub enum ConsentPlan {
    Fixed(Decision),
    Round(RoundConsent),
    Elicit {
        peer: Peer<RoleServer>,
        runtime: tokio::runtime::Handle,
        source: String,
    },
}

impl ConsentPlan {
    pub fn new(
        allow_write: bool,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        source: String,
    ) -> Self {
        if !allow_write {
            return ConsentPlan::Fixed(Decision::No("this MCP server is read-only".into()));
        }
        let can_elicit = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if !can_elicit {
            return ConsentPlan::Fixed(Decision::No(
                "not run: the statement changes data and needs the user's confirmation, which this client cannot ask for (it does not support MCP elicitation)".into(),
            ));
        }
        if is_modern(context) {
            return ConsentPlan::Round(RoundConsent {
                answer: request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get(CONFIRM_KEY))
                    .cloned(),
                state: request.request_state.clone(),
            });
        }
        ConsentPlan::Elicit {
            peer: context.peer.clone(),
            runtime: tokio::runtime::Handle::current(),
            source,
        }
    }

    /// The consent of a call that `cancel` stops.
    pub fn into_consent(self, cancel: &CancelToken) -> Box<dyn Consent> {
        match self {
            ConsentPlan::Fixed(d) => Box::new(Fixed(d)),
            ConsentPlan::Round(r) => Box::new(r),
            ConsentPlan::Elicit {
                peer,
                runtime,
                source,
            } => Box::new(ElicitConsent {
                peer,
                runtime,
                source,
                cancel: cancel.clone(),
            }),
        }
    }
}

/// Protocol 2026-07-28 or later: no requests from server to client.
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Confirms through an elicitation request to the client, waiting for it
/// (or for the call's cancel).
struct ElicitConsent {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
    source: String,
    cancel: CancelToken,
}

impl Consent for ElicitConsent {
    fn decide(&mut self, sql: &str) -> Decision {
        if !self
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Decision::No("not run: the statement changes data and this client cannot ask for confirmation (no form elicitation)".into());
        }
        let params = confirm_params(&self.source, sql);
        let asked = self.peer.create_elicitation(params);
        let cancel = self.cancel.clone();
        // A blocking thread of the call: waiting here holds no async worker.
        let answer = self.runtime.block_on(async move {
            tokio::select! {
                answer = asked => Some(answer),
                _ = cancel.cancelled() => None,
            }
        });
        match answer {
            Some(Ok(result)) => verdict(&result),
            Some(Err(e)) => Decision::No(format!(
                "not run: the client did not confirm the statement ({e})"
            )),
            None => Decision::No("cancelled".into()),
        }
    }
}

/// Confirms through an input-required round: the first round asks, the
/// retry carries the answer for the same statement.
pub struct RoundConsent {
    answer: Option<serde_json::Value>,
    state: Option<String>,
}

impl Consent for RoundConsent {
    fn decide(&mut self, sql: &str) -> Decision {
        match (&self.answer, &self.state) {
            (Some(answer), Some(state)) if *state == statement_key(sql) => {
                match serde_json::from_value::<ElicitResult>(answer.clone()) {
                    Ok(result) => verdict(&result),
                    Err(_) => Decision::No("not run: the confirmation could not be read".into()),
                }
            }
            _ => Decision::AskNextRound,
        }
    }
}

/// Yes only for an accepted form whose `run` box is ticked.
fn verdict(result: &ElicitResult) -> Decision {
    let ticked = result
        .content
        .as_ref()
        .and_then(|c| c.get("run"))
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    match result.action {
        ElicitationAction::Accept if ticked => Decision::Yes,
        ElicitationAction::Accept => Decision::No("not run: the user did not tick \"run\"".into()),
        ElicitationAction::Decline => {
            Decision::No("not run: the user declined the statement".into())
        }
        _ => Decision::No("not run: the user dismissed the confirmation".into()),
    }
}

/// The confirmation form: the statement, and one box to tick.
pub fn confirm_params(source: &str, sql: &str) -> ElicitRequestParams {
    let run = BooleanSchema::new()
        .title("Run this statement")
        .description("It changes data in the source.")
        .with_default(false);
    let requested_schema = ElicitationSchema::builder()
        .required_property("run", PrimitiveSchemaDefinition::Boolean(run))
        .build_unchecked();
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("aiq: this statement changes data in {source}. Run it?\n\n{sql}"),
        requested_schema,
    }
}

/// What ties a confirmation round to its statement.
pub fn statement_key(sql: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sql.hash(&mut h);
    format!("aiq-write-{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_ticked_accepted_form_says_yes() {
        let form = |action, run: Option<bool>| {
            let mut r = ElicitResult::new(action);
            if let Some(run) = run {
                r = r.with_content(json!({ "run": run }));
            }
            verdict(&r)
        };
        assert_eq!(form(ElicitationAction::Accept, Some(true)), Decision::Yes);
        assert!(matches!(
            form(ElicitationAction::Accept, Some(false)),
            Decision::No(_)
        ));
        assert!(matches!(
            form(ElicitationAction::Accept, None),
            Decision::No(_)
        ));
        assert!(matches!(
            form(ElicitationAction::Decline, Some(true)),
            Decision::No(_)
        ));
        assert!(matches!(
            form(ElicitationAction::Cancel, None),
            Decision::No(_)
        ));
    }

    #[test]
    fn a_confirmation_round_holds_for_its_statement_only() {
        let accepted = serde_json::to_value(
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"run": true})),
        )
        .unwrap();
        let mut consent = RoundConsent {
            answer: Some(accepted),
            state: Some(statement_key("DELETE FROM t")),
        };
        assert_eq!(consent.decide("DELETE FROM t"), Decision::Yes);
        assert_eq!(consent.decide("DROP TABLE t"), Decision::AskNextRound);
        let mut first = RoundConsent {
            answer: None,
            state: None,
        };
        assert_eq!(first.decide("DELETE FROM t"), Decision::AskNextRound);
    }

    #[test]
    fn the_form_asks_for_one_box() {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = confirm_params("shop", "DELETE FROM t")
        else {
            panic!("not a form");
        };
        assert!(message.contains("DELETE FROM t") && message.contains("shop"));
        let schema = serde_json::to_value(requested_schema).unwrap();
        assert_eq!(schema["properties"]["run"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["run"]));
    }
}

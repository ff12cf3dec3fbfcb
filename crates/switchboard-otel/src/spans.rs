//! One turn's events as spans, following the OpenTelemetry GenAI conventions for
//! agents: each call is an `invoke_agent {agent}` span (its parent is the call that
//! made it); a call made as a tool sits under an `execute_tool {tool}` span of its
//! caller (the conventions' agent-as-a-tool shape); a `chat {model}` span under each
//! call that ran model steps carries its own token usage (where backends such as
//! Phoenix count tokens). Approvals, refusals, escalations and cancellations are
//! span events; the status and `error.type` say how a call ended; cost is an
//! attribute. Spans take their times from the events, so a stored session exports
//! the same trees as a live turn.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{Span, SpanContext, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use serde_json::{json, Value};
use switchboard_core::config::{Config, Provider};
use switchboard_core::event::{CallEvent, CallRole, CallStatus, EventKind, Usage};

/// GenAI attribute names (the `opentelemetry-semantic-conventions` constants for
/// them are deprecated there: the conventions moved to their own repository).
pub mod attribute {
    pub const OPERATION: &str = "gen_ai.operation.name";
    pub const PROVIDER: &str = "gen_ai.provider.name";
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    pub const AGENT_ID: &str = "gen_ai.agent.id";
    pub const CONVERSATION: &str = "gen_ai.conversation.id";
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    pub const TOOL_TYPE: &str = "gen_ai.tool.type";
    pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    pub const ERROR_TYPE: &str = "error.type";
}

/// What a turn's spans need besides its events.
#[derive(Debug, Clone, Default)]
pub struct TurnContext {
    /// The chat session (`gen_ai.conversation.id`).
    pub conversation: Option<String>,
    /// Each agent's `gen_ai.provider.name`.
    pub providers: HashMap<String, String>,
    /// Requests and answers on the spans (opt-in).
    pub include_content: bool,
}

impl TurnContext {
    pub fn new(config: &Config, conversation: Option<String>, include_content: bool) -> TurnContext {
        let providers =
            config.agents.iter().map(|agent| (agent.name.clone(), provider_name(agent.provider).to_string())).collect();
        TurnContext { conversation, providers, include_content }
    }
}

/// The conventions' provider names where one fits; our own otherwise.
pub fn provider_name(provider: Provider) -> &'static str {
    provider.info().otel_name
}

/// One call as the events told it.
#[derive(Default)]
struct CallRecord<'a> {
    started: Option<&'a CallEvent>,
    finished: Option<&'a CallEvent>,
    marks: Vec<&'a CallEvent>,
    last_ms: u64,
}

/// Builds and ends the spans of one turn (or one outside call) on `tracer`.
/// Returns how many calls were exported.
pub fn export_turn<T: Tracer>(tracer: &T, events: &[CallEvent], context: &TurnContext) -> usize
where
    T::Span: Send + Sync + 'static,
{
    let mut order: Vec<&str> = Vec::new();
    let mut calls: HashMap<&str, CallRecord> = HashMap::new();
    for event in events {
        let record = calls.entry(event.call_id.as_str()).or_insert_with(|| {
            order.push(event.call_id.as_str());
            CallRecord::default()
        });
        record.last_ms = record.last_ms.max(event.ts_ms);
        match &event.kind {
            EventKind::CallStarted { .. } => record.started = Some(event),
            EventKind::CallFinished { .. } => record.finished = Some(event),
            EventKind::ApprovalRequested { .. }
            | EventKind::ApprovalResolved { .. }
            | EventKind::InputRequested { .. }
            | EventKind::InputAnswered { .. }
            | EventKind::CallSteered { .. }
            | EventKind::Escalated { .. } => record.marks.push(event),
            _ => {}
        }
    }
    // Calls start after their parents, so a parent's span exists before its children's.
    let mut agent_spans: HashMap<&str, SpanContext> = HashMap::new();
    let mut exported = 0;
    for call_id in order {
        let record = &calls[call_id];
        let Some(started) = record.started else { continue };
        let parent = match started.parent_id.as_deref().and_then(|parent| agent_spans.get(parent)) {
            Some(span) => Context::new().with_remote_span_context(span.clone()),
            None => Context::new(),
        };
        let agent_span = call_spans(tracer, record, started, &parent, context);
        agent_spans.insert(call_id, agent_span);
        exported += 1;
    }
    exported
}

fn time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn call_spans<T: Tracer>(
    tracer: &T,
    record: &CallRecord,
    started: &CallEvent,
    parent: &Context,
    context: &TurnContext,
) -> SpanContext
where
    T::Span: Send + Sync + 'static,
{
    let EventKind::CallStarted { role, tool_name, input, model, .. } = &started.kind else { unreachable!() };
    let agent = started.agent.as_str();
    let provider = context.providers.get(agent).cloned().unwrap_or_else(|| "unknown".into());
    let end_ms = record.finished.map(|event| event.ts_ms).unwrap_or(record.last_ms);
    let ending = Ending::of(record.finished);

    let mut tool_span = tool_name.as_ref().map(|tool| {
        let mut attributes = vec![
            KeyValue::new(attribute::OPERATION, "execute_tool"),
            KeyValue::new(attribute::TOOL_NAME, tool.clone()),
            KeyValue::new(attribute::TOOL_CALL_ID, started.call_id.clone()),
            KeyValue::new(attribute::TOOL_TYPE, "function"),
        ];
        if context.include_content {
            if let Some(input) = input {
                attributes.push(KeyValue::new(attribute::TOOL_ARGUMENTS, input.to_string()));
            }
            if let Some(delivered) = &ending.delivered {
                attributes.push(KeyValue::new(attribute::TOOL_RESULT, delivered.clone()));
            }
        }
        tracer
            .span_builder(format!("execute_tool {tool}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(time(started.ts_ms))
            .with_attributes(attributes)
            .start_with_context(tracer, parent)
    });
    let agent_parent = match &tool_span {
        Some(span) => Context::new().with_remote_span_context(span.span_context().clone()),
        None => parent.clone(),
    };

    let mut attributes = vec![
        KeyValue::new(attribute::OPERATION, "invoke_agent"),
        KeyValue::new(attribute::PROVIDER, provider.clone()),
        KeyValue::new(attribute::AGENT_NAME, agent.to_string()),
        KeyValue::new(attribute::AGENT_ID, started.call_id.clone()),
        KeyValue::new("switchboard.call_id", started.call_id.clone()),
        KeyValue::new("switchboard.depth", i64::from(started.depth)),
        KeyValue::new("switchboard.role", role_name(*role)),
    ];
    if let Some(parent_id) = &started.parent_id {
        attributes.push(KeyValue::new("switchboard.parent_id", parent_id.clone()));
    }
    if let Some(conversation) = &context.conversation {
        attributes.push(KeyValue::new(attribute::CONVERSATION, conversation.clone()));
    }
    if let Some(model) = model {
        attributes.push(KeyValue::new(attribute::REQUEST_MODEL, model.clone()));
    }
    attributes.extend(ending.attributes());
    if context.include_content {
        let request = input.as_ref().and_then(|input| input.get("request")).and_then(Value::as_str);
        if let Some(request) = request {
            attributes.push(KeyValue::new(attribute::INPUT_MESSAGES, messages("user", request, None)));
        }
        if let Some(result) = &ending.result {
            attributes.push(KeyValue::new(attribute::OUTPUT_MESSAGES, messages("assistant", result, Some("stop"))));
        }
    }
    let mut agent_span = tracer
        .span_builder(format!("invoke_agent {agent}"))
        .with_kind(SpanKind::Internal)
        .with_start_time(time(started.ts_ms))
        .with_attributes(attributes)
        .start_with_context(tracer, &agent_parent);
    let agent_context = agent_span.span_context().clone();

    if ending.steps > 0 {
        // The runner reports usage per call, not per step: one span stands for the
        // call's model steps, so backends that count tokens on model spans see them.
        let model_name = model.clone().unwrap_or_else(|| agent.to_string());
        let mut chat = vec![
            KeyValue::new(attribute::OPERATION, "chat"),
            KeyValue::new(attribute::PROVIDER, provider),
            KeyValue::new(attribute::REQUEST_MODEL, model_name.clone()),
            KeyValue::new("switchboard.model_steps", i64::from(ending.steps)),
        ];
        if let Some(usage) = ending.usage {
            chat.push(KeyValue::new(attribute::INPUT_TOKENS, usage.input_tokens as i64));
            chat.push(KeyValue::new(attribute::OUTPUT_TOKENS, usage.output_tokens as i64));
        }
        let chat_parent = Context::new().with_remote_span_context(agent_context.clone());
        let mut span = tracer
            .span_builder(format!("chat {model_name}"))
            .with_kind(SpanKind::Client)
            .with_start_time(time(started.ts_ms))
            .with_attributes(chat)
            .start_with_context(tracer, &chat_parent);
        span.end_with_timestamp(time(end_ms));
    }

    for mark in &record.marks {
        let (name, attributes) = match &mark.kind {
            EventKind::ApprovalRequested { tool_name, .. } => {
                ("switchboard.approval.requested", vec![KeyValue::new(attribute::TOOL_NAME, tool_name.clone())])
            }
            EventKind::ApprovalResolved { decision, by } => (
                "switchboard.approval.resolved",
                vec![KeyValue::new("decision", decision.as_str()), KeyValue::new("by", by.clone())],
            ),
            // The question and the answer are content: only that they happened, and who answered.
            EventKind::InputRequested { .. } => ("switchboard.input.requested", vec![]),
            EventKind::InputAnswered { answer, by } => (
                "switchboard.input.answered",
                vec![KeyValue::new("answered", answer.is_some()), KeyValue::new("by", by.clone())],
            ),
            // The message is content, like a question: who sent it, and whether the call took it.
            EventKind::CallSteered { by, taken, .. } => {
                ("switchboard.steered", vec![KeyValue::new("by", by.clone()), KeyValue::new("taken", *taken)])
            }
            EventKind::Escalated { from, to, .. } => {
                ("switchboard.escalated", vec![KeyValue::new("from", from.clone()), KeyValue::new("to", to.clone())])
            }
            _ => continue,
        };
        agent_span.add_event_with_timestamp(name, time(mark.ts_ms), attributes);
    }
    if let Some((name, attributes)) = ending.event(context.include_content) {
        agent_span.add_event_with_timestamp(name, time(end_ms), attributes);
    }
    if let Some(status) = ending.status(context.include_content) {
        agent_span.set_status(status.clone());
        if let Some(span) = tool_span.as_mut() {
            span.set_attribute(KeyValue::new(attribute::ERROR_TYPE, ending.error_type()));
            span.set_status(status);
        }
    }
    agent_span.end_with_timestamp(time(end_ms));
    if let Some(mut span) = tool_span {
        span.end_with_timestamp(time(end_ms));
    }
    agent_context
}

fn role_name(role: CallRole) -> &'static str {
    match role {
        CallRole::Turn => "turn",
        CallRole::Tool => "tool",
        CallRole::Escalation => "escalation",
        CallRole::Advisor => "advisor",
    }
}

/// A message list in the conventions' JSON shape.
fn messages(role: &str, text: &str, finish: Option<&str>) -> String {
    let mut message = json!({ "role": role, "parts": [{ "type": "text", "content": text }] });
    if let Some(finish) = finish {
        message["finish_reason"] = json!(finish);
    }
    json!([message]).to_string()
}

/// How a call ended, from its `call_finished` (all empty for a call that did not finish).
#[derive(Default)]
struct Ending {
    status: Option<CallStatus>,
    error: Option<(String, String)>,
    usage: Option<Usage>,
    usage_total: Option<Usage>,
    cost: Option<f64>,
    cost_total: Option<f64>,
    steps: u32,
    result: Option<String>,
    delivered: Option<String>,
}

impl Ending {
    fn of(finished: Option<&CallEvent>) -> Ending {
        match finished.map(|event| &event.kind) {
            Some(EventKind::CallFinished {
                status,
                result,
                usage,
                usage_total,
                cost,
                cost_total,
                steps,
                error,
                delivered,
            }) => Ending {
                status: Some(*status),
                error: error.as_ref().map(|error| (error.kind.as_str().to_string(), error.message.clone())),
                usage: *usage,
                usage_total: *usage_total,
                cost: *cost,
                cost_total: *cost_total,
                steps: *steps,
                result: result.clone(),
                delivered: delivered.clone(),
            },
            _ => Ending::default(),
        }
    }

    fn attributes(&self) -> Vec<KeyValue> {
        let mut attributes =
            vec![KeyValue::new("switchboard.status", self.status.map(CallStatus::as_str).unwrap_or("unfinished"))];
        if let Some(usage) = self.usage {
            attributes.push(KeyValue::new(attribute::INPUT_TOKENS, usage.input_tokens as i64));
            attributes.push(KeyValue::new(attribute::OUTPUT_TOKENS, usage.output_tokens as i64));
        }
        if let Some(total) = self.usage_total {
            attributes.push(KeyValue::new("switchboard.usage.subtree_total_tokens", total.total_tokens as i64));
        }
        if let Some(cost) = self.cost {
            attributes.push(KeyValue::new("switchboard.cost_usd", cost));
        }
        if let Some(cost) = self.cost_total {
            attributes.push(KeyValue::new("switchboard.cost_total_usd", cost));
        }
        if self.status.is_some_and(|status| status != CallStatus::Ok) {
            attributes.push(KeyValue::new(attribute::ERROR_TYPE, self.error_type()));
        }
        attributes
    }

    fn error_type(&self) -> String {
        match (&self.error, self.status) {
            (Some((kind, _)), _) => kind.clone(),
            (None, Some(status)) => status.as_str().to_string(),
            (None, None) => "_OTHER".to_string(),
        }
    }

    /// The span's status. An error's message is content (an agent's or a remote
    /// server's words, a user's reason): with content off, only its kind.
    fn status(&self, include_content: bool) -> Option<Status> {
        match self.status {
            Some(CallStatus::Ok) => Some(Status::Ok),
            Some(status) if include_content => {
                let why = self.error.as_ref().map(|(_, message)| message.clone()).unwrap_or_default();
                Some(Status::error(format!("{}: {why}", status.as_str())))
            }
            Some(status) => Some(Status::error(format!("{}: {}", status.as_str(), self.error_type()))),
            None => None,
        }
    }

    /// The span event a refused or cancelled call gets (its message only with content on).
    fn event(&self, include_content: bool) -> Option<(&'static str, Vec<KeyValue>)> {
        let (kind, message) = self.error.clone().unwrap_or_default();
        let mut attributes = vec![KeyValue::new("kind", kind)];
        if include_content {
            attributes.push(KeyValue::new("message", message));
        }
        match self.status? {
            CallStatus::Cancelled => Some(("switchboard.cancelled", attributes)),
            CallStatus::Denied | CallStatus::Limited => Some(("switchboard.refused", attributes)),
            CallStatus::Ok | CallStatus::Error => None,
        }
    }
}

//! A running call's events as MCP progress notifications: one line of words per
//! event (text as it streams, nested calls as they start and end, approvals,
//! runner progress), with the event itself in the notification's `_meta` under
//! `switchboard/event` so another Switchboard can rebuild the remote subtree.
//! Consecutive text deltas of one call that queued up while the client was slow
//! are merged into one notification. Pure.

use switchboard_core::event::{CallEvent, EventKind};

/// The `_meta` key the event travels under.
pub const EVENT_META_KEY: &str = "switchboard/event";

/// The words a progress notification carries for `event`; `None` for events that
/// only update figures (usage), which travel in `_meta` alone.
pub fn describe(event: &CallEvent) -> Option<String> {
    let agent = &event.agent;
    let nested = event.parent_id.is_some();
    match &event.kind {
        EventKind::CallStarted { tool_name, model, .. } => {
            let via = tool_name.as_deref().map(|name| format!(" as {name}")).unwrap_or_default();
            let on = model.as_deref().map(|model| format!(" on {model}")).unwrap_or_default();
            Some(format!("{agent} started{via}{on}"))
        }
        EventKind::TextDelta { text } if nested => Some(format!("{agent}: {text}")),
        EventKind::TextDelta { text } => Some(text.clone()),
        // The calls themselves follow as their own starts.
        EventKind::ReasoningDelta { .. } | EventKind::UsageUpdated { .. } | EventKind::ToolCallsAsked { .. } => None,
        EventKind::ToolProgress { message, .. } => Some(format!("{agent}: {message}")),
        EventKind::ApprovalRequested { tool_name, .. } => Some(format!("{agent} ({tool_name}) waits for approval")),
        EventKind::ApprovalResolved { decision, by } => {
            Some(format!("{agent}: {} by {by}", decision.as_str().replace('_', " ")))
        }
        EventKind::InputRequested { question } => Some(format!("{agent} asks: {question}")),
        EventKind::InputAnswered { answer: Some(_), by } => Some(format!("{agent}: answered by {by}")),
        EventKind::InputAnswered { answer: None, by } => Some(format!("{agent}: the question was declined by {by}")),
        EventKind::Escalated { from, to, .. } => Some(format!("{from} handed the turn to {to}")),
        EventKind::CallSteered { message, by, taken: true, .. } => {
            Some(format!("{agent} was steered by the {by}: {message}"))
        }
        EventKind::CallSteered { by, taken: false, why: None, .. } => {
            Some(format!("{agent} ended before it took the {by}'s message"))
        }
        EventKind::CallSteered { by, taken: false, why: Some(why), .. } => {
            Some(format!("{agent} did not take the {by}'s message: {why}"))
        }
        EventKind::CallFinished { status, usage_total, error, .. } => {
            let tokens = usage_total.map(|usage| format!(", {} tokens", usage.total_tokens)).unwrap_or_default();
            let why = error.as_ref().map(|error| format!(": {}", error.message)).unwrap_or_default();
            Some(format!("{agent} finished: {}{tokens}{why}", status.as_str()))
        }
    }
}

/// Merges `next` into `pending` when both are text deltas of the same call (the
/// merged event keeps the later sequence number); returns `next` back otherwise.
pub fn merge(pending: &mut CallEvent, next: CallEvent) -> Option<CallEvent> {
    match (&mut pending.kind, &next.kind) {
        (EventKind::TextDelta { text }, EventKind::TextDelta { text: more }) if pending.call_id == next.call_id => {
            text.push_str(more);
            pending.seq = next.seq;
            pending.ts_ms = next.ts_ms;
            None
        }
        _ => Some(next),
    }
}

/// Drains what queued up into a list of events to send, text deltas merged.
pub fn coalesce(events: impl IntoIterator<Item = CallEvent>) -> Vec<CallEvent> {
    let mut out: Vec<CallEvent> = Vec::new();
    for event in events {
        match out.last_mut() {
            Some(last) => {
                if let Some(event) = merge(last, event) {
                    out.push(event);
                }
            }
            None => out.push(event),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::event::{CallStatus, Usage};

    fn event(seq: u64, call_id: &str, parent: Option<&str>, kind: EventKind) -> CallEvent {
        CallEvent {
            seq,
            ts_ms: seq,
            call_id: call_id.into(),
            parent_id: parent.map(Into::into),
            agent: format!("agent-{call_id}"),
            depth: u32::from(parent.is_some()) + 1,
            kind,
        }
    }

    fn delta(seq: u64, call_id: &str, text: &str) -> CallEvent {
        event(seq, call_id, None, EventKind::TextDelta { text: text.into() })
    }

    #[test]
    fn consecutive_deltas_of_one_call_merge_and_others_do_not() {
        let merged = coalesce(vec![delta(1, "a", "he"), delta(2, "a", "llo"), delta(3, "b", "x"), delta(4, "a", "!")]);
        let texts: Vec<(String, u64)> = merged
            .iter()
            .map(|event| match &event.kind {
                EventKind::TextDelta { text } => (format!("{}:{text}", event.call_id), event.seq),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(texts, vec![("a:hello".into(), 2), ("b:x".into(), 3), ("a:!".into(), 4)]);
    }

    #[test]
    fn lines_name_the_agent_of_nested_calls_and_the_outcome() {
        let nested = event(5, "c", Some("a"), EventKind::TextDelta { text: "hi".into() });
        assert_eq!(describe(&nested).as_deref(), Some("agent-c: hi"));
        assert_eq!(describe(&delta(1, "a", "hi")).as_deref(), Some("hi"));
        let finished = event(
            9,
            "c",
            Some("a"),
            EventKind::CallFinished {
                status: CallStatus::Ok,
                result: None,
                usage: None,
                usage_total: Some(Usage::new(3, 4)),
                cost: None,
                cost_total: None,
                steps: 1,
                error: None,
                delivered: None,
            },
        );
        assert_eq!(describe(&finished).as_deref(), Some("agent-c finished: ok, 7 tokens"));
        let usage = EventKind::UsageUpdated {
            usage: Usage::default(),
            usage_total: Usage::default(),
            cost: None,
            cost_total: None,
        };
        assert_eq!(describe(&event(2, "a", None, usage)), None);
    }
}

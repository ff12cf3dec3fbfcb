//! Records for the sessions' unit tests: a call's events in turn `t1`.

use super::store::SessionRecord;
use crate::event::{CallEvent, CallRole, CallStatus, EventKind, Usage};

pub(super) fn event(
    call: &str,
    parent: Option<&str>,
    agent: &str,
    depth: u32,
    ts_ms: u64,
    kind: EventKind,
) -> SessionRecord {
    SessionRecord::Event {
        turn_id: "t1".into(),
        event: CallEvent {
            seq: ts_ms,
            ts_ms,
            call_id: call.into(),
            parent_id: parent.map(str::to_string),
            agent: agent.into(),
            depth,
            kind,
        },
    }
}

pub(super) fn started() -> EventKind {
    EventKind::CallStarted {
        role: CallRole::Tool,
        tool_name: None,
        input: None,
        tools: vec![],
        model: None,
        steering: Default::default(),
    }
}

pub(super) fn finished(status: CallStatus, tokens: u64) -> EventKind {
    EventKind::CallFinished {
        status,
        result: None,
        usage: None,
        usage_total: Some(Usage::new(tokens, 0)),
        cost: None,
        cost_total: None,
        steps: 1,
        error: None,
        delivered: None,
    }
}

/// A few events of different kinds, with text that needs escaping.
pub(super) fn sample_events() -> Vec<CallEvent> {
    let kinds = [
        started(),
        EventKind::TextDelta { text: "a \"quoted\"\nline ✓".into() },
        finished(CallStatus::Ok, 7),
        finished(CallStatus::Error, 0),
    ];
    kinds
        .into_iter()
        .enumerate()
        .map(|(index, kind)| match event("c2", Some("c1"), "wörker", 1, index as u64 + 1, kind) {
            SessionRecord::Event { event, .. } => event,
            _ => unreachable!("event() makes an event"),
        })
        .collect()
}

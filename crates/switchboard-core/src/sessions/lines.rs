//! A streaming turn's event lines, written from the borrowed event: the same bytes
//! as its `SessionRecord::Event` line (tested in `pipeline.rs`), with no clone.

use serde::Serialize;

use crate::event::CallEvent;

/// The line of `SessionRecord::Event { turn_id, event }`, written from borrowed
/// parts (a streaming turn's events are not cloned to be logged).
pub(super) fn encode_event_line(lines: &mut Vec<u8>, turn_id: &str, event: &CallEvent) {
    #[derive(Serialize)]
    #[serde(tag = "type", rename = "event")]
    struct EventLine<'a> {
        turn_id: &'a str,
        event: &'a CallEvent,
    }
    serde_json::to_writer(&mut *lines, &EventLine { turn_id, event }).expect("events serialize");
    lines.push(b'\n');
}

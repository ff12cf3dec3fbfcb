//! A session log's lines: each record as one line of JSON, and a streaming turn's
//! event lines written from the borrowed event (the same bytes as its record).

use serde::Serialize;

use super::store::SessionRecord;
use crate::event::CallEvent;

/// One record as a log line (JSON and a newline), onto `lines`.
pub(super) fn encode_line(lines: &mut Vec<u8>, record: &SessionRecord) {
    serde_json::to_writer(&mut *lines, record).expect("records serialize");
    lines.push(b'\n');
}

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

#[cfg(test)]
mod line_tests {
    use super::*;
    use crate::sessions::store::SessionRecord;

    #[test]
    fn an_event_line_from_borrowed_parts_is_the_records_line() {
        for event in crate::sessions::test_records::sample_events() {
            let (mut borrowed, mut owned) = (Vec::new(), Vec::new());
            encode_event_line(&mut borrowed, "t7", &event);
            encode_line(&mut owned, &SessionRecord::Event { turn_id: "t7".into(), event });
            assert_eq!(String::from_utf8(borrowed).unwrap(), String::from_utf8(owned).unwrap());
        }
    }
}

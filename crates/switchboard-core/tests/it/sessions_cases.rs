//! Session logs: create, append, list, rename, delete, replay; bad ids refused;
//! and a writer killed with SIGKILL mid-stream loses at most its last line.

use std::process::Command;
use std::time::Duration;

use switchboard_core::sessions::{SessionError, SessionRecord, SessionStore};
use switchboard_core::{CallEvent, CallStatus, EventKind};

fn delta(turn: &str, seq: u64, text: &str) -> SessionRecord {
    SessionRecord::Event {
        turn_id: turn.into(),
        event: CallEvent {
            seq,
            ts_ms: 1000 + seq,
            call_id: "c1".into(),
            parent_id: None,
            agent: "assistant".into(),
            depth: 0,
            kind: EventKind::TextDelta { text: text.into() },
        },
    }
}

#[test]
fn sessions_round_trip_and_list_newest_first() {
    let folder = tempfile::tempdir().unwrap();
    let store = SessionStore::open(folder.path()).unwrap();
    store.create("older", "First chat", 100).unwrap();
    store.create("newer", "Second chat", 200).unwrap();
    let records = vec![
        SessionRecord::UserMessage {
            turn_id: "t1".into(),
            text: "hello".into(),
            agent: None,
            handoff: None,
            process: None,
            ts_ms: 300,
        },
        delta("t1", 1, "Hi"),
        delta("t1", 2, " there"),
        SessionRecord::TurnEnded {
            turn_id: "t1".into(),
            status: CallStatus::Ok,
            text: "Hi there".into(),
            answered_by: "assistant".into(),
        },
        SessionRecord::UserMessage {
            turn_id: "t2".into(),
            text: "again".into(),
            agent: Some("expert".into()),
            handoff: Some(true),
            process: None,
            ts_ms: 400,
        },
        SessionRecord::Retracted { turn_id: "t2".into() },
    ];
    for record in &records {
        store.append("older", record).unwrap();
    }
    store.rename("older", "Renamed chat").unwrap();
    let listed: Vec<(String, String, u32)> =
        store.list().unwrap().into_iter().map(|summary| (summary.id, summary.title, summary.turns)).collect();
    assert_eq!(listed, vec![("older".into(), "Renamed chat".into(), 1), ("newer".into(), "Second chat".into(), 0)]);

    // A second store (the app restarted) reads the same log back.
    let reopened = SessionStore::open(folder.path()).unwrap();
    let log = reopened.load("older").unwrap();
    assert_eq!(log.skipped_lines, 0);
    assert_eq!(log.records[0], SessionRecord::Created { title: "First chat".into(), created_ms: 100 });
    assert_eq!(&log.records[1..7], &records[..]);

    reopened.delete("newer").unwrap();
    assert!(matches!(reopened.load("newer"), Err(SessionError::NotFound(_))));
    for bad in ["../etc/passwd", "", "a/b", "x.jsonl"] {
        assert!(matches!(reopened.append(bad, &delta("t", 1, "x")), Err(SessionError::BadId(_))), "{bad}");
    }
}

/// Not a test on its own: the writer process the kill test starts.
#[test]
#[ignore = "run by a_killed_writer_loses_at_most_one_line as a child process"]
fn session_writer_child() {
    let Ok(folder) = std::env::var("SWITCHBOARD_SESSION_WRITER") else { return };
    let store = SessionStore::open(folder).unwrap();
    store.create("live", "Live", 1).unwrap();
    let long_text = "token ".repeat(50);
    for seq in 1.. {
        store.append("live", &delta("t1", seq, &long_text)).unwrap();
    }
}

#[test]
fn a_killed_writer_loses_at_most_one_line() {
    let folder = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sessions_cases::session_writer_child", "--ignored", "--nocapture"])
        .env("SWITCHBOARD_SESSION_WRITER", folder.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once it has written a good part: readiness read from the file itself.
    let log_path = folder.path().join("live.jsonl");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::read(&log_path).map(|bytes| bytes.iter().filter(|byte| **byte == b'\n').count()).unwrap_or(0) < 200 {
        assert!(std::time::Instant::now() < deadline, "the writer never got going");
        std::thread::yield_now();
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no flush of anything pending
    child.wait().unwrap();
    let log = SessionStore::open(folder.path()).unwrap().load("live").unwrap();
    assert!(log.records.len() > 100, "the writer wrote for a while ({} records)", log.records.len());
    assert!(log.skipped_lines <= 1, "only a torn last line may be lost ({} skipped)", log.skipped_lines);
    // The events that survived are gapless from the start.
    let sequence: Vec<u64> = log
        .records
        .iter()
        .filter_map(|record| match record {
            SessionRecord::Event { event, .. } => Some(event.seq),
            _ => None,
        })
        .collect();
    assert!(sequence.iter().enumerate().all(|(index, seq)| *seq == index as u64 + 1));
}

#[test]
fn after_a_torn_write_the_next_record_lands_on_a_line_of_its_own() {
    let folder = tempfile::tempdir().unwrap();
    {
        let store = SessionStore::open(folder.path()).unwrap();
        store.create("torn", "Torn", 100).unwrap();
        store.append("torn", &delta("t1", 1, "whole")).unwrap();
    }
    // A crash mid-write: half a record, no newline.
    let path = folder.path().join("torn.jsonl");
    let whole = serde_json::to_string(&delta("t1", 2, "never finished")).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&whole.as_bytes()[..whole.len() / 2]);
    std::fs::write(&path, bytes).unwrap();
    // The program starts again and the user sends a message.
    let store = SessionStore::open(folder.path()).unwrap();
    let message = SessionRecord::UserMessage {
        turn_id: "t2".into(),
        text: "after the crash".into(),
        agent: None,
        handoff: None,
        process: None,
        ts_ms: 300,
    };
    store.append("torn", &message).unwrap();
    let log = store.load("torn").unwrap();
    assert_eq!(log.skipped_lines, 1, "the torn line is skipped");
    assert_eq!(log.records.len(), 3, "created, the whole delta and the message: {:?}", log.records);
    assert_eq!(log.records.last(), Some(&message), "the first record after the crash is kept");
    assert_eq!(store.list().unwrap()[0].turns, 1);
}

#[test]
fn an_invalid_byte_keeps_its_line_damage_is_named_and_newer_records_are_not_damage() {
    let folder = tempfile::tempdir().unwrap();
    let store = SessionStore::open(folder.path()).unwrap();
    store.create("mixed", "Mixed", 100).unwrap();
    let path = folder.path().join("mixed.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    // Line 2: a user message with one invalid UTF-8 byte; line 3: damage; line 4: a
    // record a newer version writes; line 5: damage again.
    bytes.extend_from_slice(
        b"{\"type\":\"user_message\",\"turn_id\":\"t1\",\"text\":\"caf\xe9 question\",\"agent\":null,\"ts_ms\":200}\n",
    );
    bytes.extend_from_slice(b"{\"type\":\"user_mess\n");
    bytes.extend_from_slice(b"{\"type\":\"call_forked\",\"turn_id\":\"t1\",\"by\":\"user\"}\n");
    bytes.extend_from_slice(b"not json at all\n");
    // Line 6: an event of a kind a newer version has.
    bytes.extend_from_slice(b"{\"type\":\"event\",\"turn_id\":\"t1\",\"event\":{\"seq\":1,\"ts_ms\":1,\"call_id\":\"c1\",\"parent_id\":null,\"agent\":\"a\",\"depth\":0,\"type\":\"call_forked\",\"by\":\"user\"}}\n");
    std::fs::write(&path, bytes).unwrap();
    let log = SessionStore::open(folder.path()).unwrap().load("mixed").unwrap();
    let texts: Vec<&str> = log
        .records
        .iter()
        .filter_map(|record| match record {
            SessionRecord::UserMessage { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["caf\u{FFFD} question"], "the question survives its bad byte");
    assert_eq!((log.skipped_lines, log.damaged_lines.clone(), log.newer_records), (2, vec![3, 5], 2));
}

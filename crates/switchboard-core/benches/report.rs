//! Delegation report benchmark (issue 27): the report over 100,000 logged events
//! (100 sessions of 50 turns, each turn a root that delegates to two of five
//! tool-agents, with text deltas: the shape a chat's log has), beside reading the
//! same files and splitting their lines, which any report from the logs must at
//! least do, and beside parsing every line into a record. Median of 7 runs. Run:
//! `make bench`.

use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use switchboard_core::sessions::report::{report, ReportRange};
use switchboard_core::sessions::{SessionRecord, SessionStore};
use switchboard_core::{CallEvent, CallRole, CallStatus, EventKind, Usage};

const SESSIONS: usize = 100;
const TURNS: usize = 50;
const ROUNDS: usize = 7;

fn event(seq: u64, call: &str, parent: Option<&str>, agent: &str, depth: u32, kind: EventKind) -> CallEvent {
    CallEvent {
        seq,
        ts_ms: 1_790_000_000_000 + seq * 7,
        call_id: call.into(),
        parent_id: parent.map(str::to_owned),
        agent: agent.into(),
        depth,
        kind,
    }
}

fn started(role: CallRole) -> EventKind {
    EventKind::CallStarted {
        role,
        tool_name: None,
        input: None,
        tools: vec![],
        model: Some("m".into()),
        steering: Default::default(),
    }
}

fn finished(status: CallStatus, tokens: u64) -> EventKind {
    EventKind::CallFinished {
        status,
        result: Some("done".into()),
        usage: Some(Usage::new(tokens, tokens / 2)),
        usage_total: Some(Usage::new(tokens * 3, tokens)),
        cost: Some(0.001),
        cost_total: Some(0.003),
        steps: 1,
        error: None,
        delivered: None,
    }
}

/// One turn's 20 events: the root starts, two delegates each start, stream six
/// deltas and finish, the root streams two deltas and finishes.
fn turn_events(turn: usize) -> Vec<CallEvent> {
    let agents = ["researcher", "coder", "summariser", "critic", "planner"];
    let mut events = vec![event(1, "c1", None, "assistant", 0, started(CallRole::Turn))];
    for (index, child) in ["c2", "c3"].iter().enumerate() {
        let agent = agents[(turn + index) % agents.len()];
        let seq = events.len() as u64 + 1;
        events.push(event(seq, child, Some("c1"), agent, 1, started(CallRole::Tool)));
        for delta in 0..6 {
            let seq = events.len() as u64 + 1;
            let kind = EventKind::TextDelta { text: format!("word {delta} ") };
            events.push(event(seq, child, Some("c1"), agent, 1, kind));
        }
        let status = if turn.is_multiple_of(10) { CallStatus::Error } else { CallStatus::Ok };
        let seq = events.len() as u64 + 1;
        events.push(event(seq, child, Some("c1"), agent, 1, finished(status, 40)));
    }
    for delta in 0..2 {
        let seq = events.len() as u64 + 1;
        events.push(event(seq, "c1", None, "assistant", 0, EventKind::TextDelta { text: format!("answer {delta} ") }));
    }
    let seq = events.len() as u64 + 1;
    events.push(event(seq, "c1", None, "assistant", 0, finished(CallStatus::Ok, 100)));
    events
}

fn median(mut work: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[ROUNDS / 2]
}

fn main() {
    let folder = tempfile::tempdir().expect("temp dir");
    let store = SessionStore::open(folder.path()).expect("store");
    let mut events = 0usize;
    for session in 0..SESSIONS {
        let id = format!("s{session:03}");
        store.create(&id, &format!("Session {session}"), 1_790_000_000_000).unwrap();
        for turn in 0..TURNS {
            let turn_id = format!("t{turn}");
            for event in turn_events(turn) {
                store.append(&id, &SessionRecord::Event { turn_id: turn_id.clone(), event }).unwrap();
                events += 1;
            }
        }
    }
    let bytes: u64 =
        std::fs::read_dir(folder.path()).unwrap().map(|entry| entry.unwrap().metadata().unwrap().len()).sum();
    println!(
        "sessions: {SESSIONS}, {events} events, {:.1} MiB of logs; median of {ROUNDS} runs",
        bytes as f64 / 1048576.0
    );

    let files: Vec<_> = std::fs::read_dir(folder.path()).unwrap().map(|entry| entry.unwrap().path()).collect();
    let read_only = median(|| {
        let mut lines = 0usize;
        for path in &files {
            for line in BufReader::new(std::fs::File::open(path).unwrap()).split(b'\n') {
                lines += black_box(line.unwrap()).len().min(1);
            }
        }
        black_box(lines);
    });
    let parse_only = median(|| {
        let mut records = 0usize;
        for path in &files {
            for line in BufReader::new(std::fs::File::open(path).unwrap()).split(b'\n') {
                let line = line.unwrap();
                if let Ok(record) = serde_json::from_slice::<SessionRecord>(&line) {
                    records += matches!(black_box(&record), SessionRecord::Event { .. }) as usize;
                }
            }
        }
        black_box(records);
    });
    let mut last = None;
    let full = median(|| last = Some(report(&store, ReportRange::default()).unwrap()));
    let computed = last.unwrap();
    assert_eq!(computed.turns as usize, SESSIONS * TURNS);
    assert_eq!(computed.agents.iter().map(|agent| agent.calls as usize).sum::<usize>(), SESSIONS * TURNS * 2);

    let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
    println!("{:<52} {:>8.1} ms", "baseline: read the files and split their lines", ms(read_only));
    println!(
        "{:<52} {:>8.1} ms  ({:.1}x the read)",
        "baseline: also parse every line into a record",
        ms(parse_only),
        parse_only.as_secs_f64() / read_only.as_secs_f64()
    );
    println!(
        "{:<52} {:>8.1} ms  ({:.1}x the read, {:.2}x the parse; {:.2} µs an event)",
        "the delegation report over every session",
        ms(full),
        full.as_secs_f64() / read_only.as_secs_f64(),
        full.as_secs_f64() / parse_only.as_secs_f64(),
        full.as_secs_f64() * 1e6 / events as f64
    );
}

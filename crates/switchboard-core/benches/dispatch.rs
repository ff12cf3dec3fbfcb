//! Dispatcher benchmark (issue 4), every figure beside a baseline from the same run:
//! (a) the dispatcher's overhead for one nested call (parent asks, child answers,
//!     parent finishes) against a bare HTTP client sending the same three request
//!     bodies (byte for byte, as the dispatcher sent them) to the same loopback
//!     server and parsing the same SSE answers into JSON;
//! (b) relay throughput of child text deltas to the root's event stream, against a
//!     bare loop handing the same deltas to a closure;
//! (c) memory per concurrent call with 100 calls in flight (counted, not assumed),
//!     from the process RSS, beside 100 idle tasks that stay alive meanwhile (so
//!     the dispatcher cannot reuse the baseline's freed memory);
//! (d) a turn of 8 parallel streaming delegates run in a chat session, its log on
//!     (every event written by the turn's pipeline, in batches, off the async
//!     workers) against the same turn with no log, and against each event written
//!     under the turn's lock as it is emitted (how turns were logged before).
//! Run: `make bench`.

#[path = "support/loopback.rs"]
mod loopback;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use switchboard_core::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallEvent, Config, Dispatcher, Provider, TurnControl, TurnRequest, Usage,
};
use tokio::sync::Semaphore;

const NESTED_ROUNDS: usize = 400;
const DELTAS: usize = 200_000;
const CONCURRENT: usize = 100;
const LOGGED_DELEGATES: usize = 8;
const LOGGED_DELTAS: usize = 25_000;

fn http_agent(name: &str, base: &str) -> AgentConfig {
    let mut agent = AgentConfig::new(name, Provider::OpenAiCompatible);
    agent.url = Some(base.to_string());
    agent.model = Some(name.to_string());
    agent
}

fn nested_config(base: &str) -> Config {
    // The guidance skill would add ~2 KB of prompt the bare client does not send:
    // payload, not dispatcher overhead, so it is off for a like-for-like ratio.
    let mut parent = http_agent("parent", base);
    parent.skill = Some(switchboard_core::config::SkillSetting::Enabled(false));
    let mut config = Config {
        agents: vec![parent, http_agent("child", base)],
        agent_tools: vec![AgentToolEntry::new("child", "Answers at once.")],
        ..Config::default()
    };
    config.primary = Some("parent".into());
    config
}

/// Parent's first request → a call to agent_child; the child's → text; the parent's
/// second (carrying the tool result) → text.
fn responder() -> loopback::Responder {
    let tool_call = loopback::tool_call_stream("agent_child", "{\"request\":\"answer\"}");
    let child = loopback::text_stream("child answer");
    let last = loopback::text_stream("parent answer");
    Arc::new(move |body: &str| {
        if body.contains("\"model\":\"child\"") {
            child.clone()
        } else if body.contains("\"role\":\"tool\"") {
            last.clone()
        } else {
            tool_call.clone()
        }
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The three requests of a nested call, with the bodies the dispatcher sent, each
/// answer's SSE parsed as the `local` runner does (its capped SSE reader, then JSON).
async fn bare_three_requests(client: &reqwest::Client, endpoint: &str, bodies: &[String]) {
    use switchboard_core::runner::sse::SseReader;
    for body in bodies {
        let response =
            client.post(endpoint).header("content-type", "application/json").body(body.clone()).send().await.unwrap();
        let mut events = SseReader::new(response.bytes_stream(), 10 * 1024 * 1024);
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            if event.data != "[DONE]" {
                black_box(serde_json::from_str::<serde_json::Value>(&event.data).unwrap());
            }
        }
    }
}

async fn nested_overhead() {
    let (base, received) = loopback::serve(responder()).await;
    let endpoint = format!("{base}/v1/chat/completions");
    let client = reqwest::Client::new();
    let dispatcher = Dispatcher::new(nested_config(&base));
    let sink: switchboard_core::EventSink = Arc::new(|event| {
        black_box(event);
    });
    // One dispatcher turn first: its three request bodies are what the bare client sends.
    dispatcher
        .run_turn(
            TurnRequest { message: "go".into(), ..Default::default() },
            sink.clone(),
            TurnControl::approving_all(),
        )
        .await;
    let bodies: Vec<String> = received
        .lock()
        .unwrap()
        .iter()
        .map(|request| request.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(bodies.len(), 3, "one nested call is three requests");
    // Warm both paths (connections, runner cache).
    for _ in 0..20 {
        bare_three_requests(&client, &endpoint, &bodies).await;
        dispatcher
            .run_turn(
                TurnRequest { message: "go".into(), ..Default::default() },
                sink.clone(),
                TurnControl::approving_all(),
            )
            .await;
    }
    let before = received.lock().unwrap().len();
    let (mut bare, mut turns) = (Vec::new(), Vec::new());
    for _ in 0..NESTED_ROUNDS {
        let start = Instant::now();
        bare_three_requests(&client, &endpoint, &bodies).await;
        bare.push(start.elapsed());
        let start = Instant::now();
        let outcome = dispatcher
            .run_turn(
                TurnRequest { message: "go".into(), ..Default::default() },
                sink.clone(),
                TurnControl::approving_all(),
            )
            .await;
        turns.push(start.elapsed());
        assert_eq!(outcome.text, "parent answer");
    }
    assert_eq!(received.lock().unwrap().len() - before, NESTED_ROUNDS * 6, "three requests each way per round");
    let (bare, turn) = (median(bare), median(turns));
    println!("(a) one nested call over loopback HTTP, median of {NESTED_ROUNDS}:");
    let bytes: usize = bodies.iter().map(String::len).sum();
    println!("    bare client, the same 3 bodies ({bytes} bytes) and SSE parsing {:>8.3} ms", bare.as_secs_f64() * 1e3);
    println!(
        "    dispatcher turn                {:>8.3} ms  ({:.2}x the bare client; {:+.3} ms added per nested call)",
        turn.as_secs_f64() * 1e3,
        turn.as_secs_f64() / bare.as_secs_f64(),
        (turn.as_secs_f64() - bare.as_secs_f64()) * 1e3
    );
}

/// A model that streams `deltas` one-word deltas, or calls `agent_child` once.
struct Streamer {
    deltas: usize,
    delegate: bool,
    gate: Option<Arc<Semaphore>>,
    /// How many calls have reached the gate (are in flight, waiting).
    waiting: Arc<AtomicU64>,
}

#[async_trait]
impl Runner for Streamer {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let called =
            request.messages.iter().any(|message| matches!(message, switchboard_core::contract::Message::Tool { .. }));
        if self.delegate && !called {
            let calls = (0..request.tools.len().max(1))
                .map(|index| ToolCall::new(format!("call_{index}"), "agent_child", "{\"request\":\"go\"}"))
                .collect();
            return Ok(ModelReply {
                text: String::new(),
                tool_calls: calls,
                usage: Some(Usage::new(1, 1)),
                cost: None,
            });
        }
        if let Some(gate) = &self.gate {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            let _permit = gate.acquire().await.unwrap();
        }
        for _ in 0..self.deltas {
            on_delta(ModelDelta::Text("word ".into()));
        }
        Ok(ModelReply {
            text: "done".into(),
            tool_calls: vec![],
            usage: Some(Usage::new(1, self.deltas as u64)),
            cost: None,
        })
    }
}

fn in_process_config(parallel: u32) -> Config {
    let mut config = Config {
        agents: vec![AgentConfig::new("parent", Provider::Demo), AgentConfig::new("child", Provider::Demo)],
        agent_tools: vec![AgentToolEntry::new("child", "Streams.")],
        ..Config::default()
    };
    config.limits.max_parallel = Some(parallel);
    config.limits.max_calls_per_turn = Some(1000);
    config
}

async fn relay_throughput() {
    // Baseline: the same deltas handed straight to a counting closure.
    let counter = AtomicU64::new(0);
    let start = Instant::now();
    let count = |delta: ModelDelta| {
        black_box(&delta);
        counter.fetch_add(1, Ordering::Relaxed);
    };
    for _ in 0..DELTAS {
        count(ModelDelta::Text("word ".into()));
    }
    let bare = start.elapsed();

    let dispatcher = Dispatcher::new(in_process_config(1));
    let waiting = Arc::new(AtomicU64::new(0));
    let streamer = |deltas, delegate| Arc::new(Streamer { deltas, delegate, gate: None, waiting: waiting.clone() });
    dispatcher.runners().insert("parent", streamer(0, true));
    dispatcher.runners().insert("child", streamer(DELTAS, false));
    let relayed = Arc::new(AtomicU64::new(0));
    let seen = relayed.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event| {
        if event.depth == 0 {
            black_box(&event);
        }
        seen.fetch_add(1, Ordering::Relaxed);
    });
    let start = Instant::now();
    dispatcher
        .run_turn(TurnRequest { message: "go".into(), ..Default::default() }, sink, TurnControl::approving_all())
        .await;
    let elapsed = start.elapsed();
    let events = relayed.load(Ordering::Relaxed);
    assert!(events as usize > DELTAS);
    println!("(b) relay of {DELTAS} child text deltas to the root stream:");
    println!("    bare closure loop              {:>12.0} deltas/s", DELTAS as f64 / bare.as_secs_f64());
    println!(
        "    dispatcher (numbered events)   {:>12.0} events/s  ({:.1}x slower than the bare loop)",
        events as f64 / elapsed.as_secs_f64(),
        (elapsed.as_secs_f64() / events as f64) / (bare.as_secs_f64() / DELTAS as f64)
    );
}

fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|value| value.parse().ok()).unwrap_or(0);
    pages * 4
}

async fn memory_per_call() {
    // Baseline: 100 idle tokio tasks holding a small buffer each, alive until the
    // end, so the dispatcher's calls cannot reuse their memory.
    let idle_gate = Arc::new(Semaphore::new(0));
    let started = Arc::new(AtomicU64::new(0));
    let before_tasks = resident_kib();
    let tasks: Vec<_> = (0..CONCURRENT)
        .map(|_| {
            let (gate, started) = (idle_gate.clone(), started.clone());
            tokio::spawn(async move {
                let buffer = vec![1u8; 1024];
                started.fetch_add(1, Ordering::SeqCst);
                let _permit = gate.acquire().await.unwrap();
                black_box(buffer);
            })
        })
        .collect();
    while started.load(Ordering::SeqCst) < CONCURRENT as u64 {
        tokio::task::yield_now().await;
    }
    let task_kib = resident_kib().saturating_sub(before_tasks);

    let gate = Arc::new(Semaphore::new(0));
    let waiting = Arc::new(AtomicU64::new(0));
    let dispatcher = Arc::new(Dispatcher::new(in_process_config(CONCURRENT as u32)));
    // The parent asks for one call per offered tool; offer it enough by asking CONCURRENT times.
    dispatcher.runners().insert("parent", Arc::new(ManyCalls { calls: CONCURRENT }));
    let child = Streamer { deltas: 10, delegate: false, gate: Some(gate.clone()), waiting: waiting.clone() };
    dispatcher.runners().insert("child", Arc::new(child));
    let before = resident_kib();
    let turn = {
        let dispatcher = dispatcher.clone();
        tokio::spawn(async move {
            let sink: switchboard_core::EventSink = Arc::new(|event| {
                black_box(event);
            });
            dispatcher
                .run_turn(
                    TurnRequest { message: "go".into(), ..Default::default() },
                    sink,
                    TurnControl::approving_all(),
                )
                .await
        })
    };
    // Measured when every call is in flight (each child waits at the gate), not
    // after a sleep that hopes so.
    while waiting.load(Ordering::SeqCst) < CONCURRENT as u64 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let during = resident_kib();
    assert_eq!(waiting.load(Ordering::SeqCst), CONCURRENT as u64, "{CONCURRENT} calls in flight");
    gate.add_permits(CONCURRENT);
    let outcome = turn.await.unwrap();
    assert_eq!(outcome.status, switchboard_core::CallStatus::Ok);
    idle_gate.add_permits(CONCURRENT);
    for task in tasks {
        task.await.unwrap();
    }
    let per_call = during.saturating_sub(before) as f64 / CONCURRENT as f64;
    println!("(c) memory with {CONCURRENT} calls in flight (process RSS; the baseline's tasks alive meanwhile):");
    println!("    idle tokio task + 1 KiB        {:>8.1} KiB each", task_kib as f64 / CONCURRENT as f64);
    println!("    concurrent tool-agent call     {per_call:>8.1} KiB each");
}

/// A parent that asks for `calls` tool-agent calls in one response.
struct ManyCalls {
    calls: usize,
}

#[async_trait]
impl Runner for ManyCalls {
    async fn stream(&self, request: &ModelRequest, _on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        if request.messages.iter().any(|message| matches!(message, switchboard_core::contract::Message::Tool { .. })) {
            return Ok(ModelReply { text: "all back".into(), tool_calls: vec![], usage: None, cost: None });
        }
        let calls = (0..self.calls)
            .map(|index| ToolCall::new(format!("call_{index}"), "agent_child", "{\"request\":\"go\"}"))
            .collect();
        Ok(ModelReply { text: String::new(), tool_calls: calls, usage: None, cost: None })
    }
}

/// The turn of (d): `LOGGED_DELEGATES` children streaming `LOGGED_DELTAS` deltas each, in parallel.
fn logged_turn_dispatcher() -> Dispatcher {
    let dispatcher = Dispatcher::new(in_process_config(LOGGED_DELEGATES as u32));
    dispatcher.runners().insert("parent", Arc::new(ManyCalls { calls: LOGGED_DELEGATES }));
    let waiting = Arc::new(AtomicU64::new(0));
    dispatcher
        .runners()
        .insert("child", Arc::new(Streamer { deltas: LOGGED_DELTAS, delegate: false, gate: None, waiting }));
    dispatcher
}

async fn session_log_cost() {
    use switchboard_core::sessions::{ChatSessions, SessionRecord, SessionStore, SessionTurn, Show};
    let request = || TurnRequest { message: "go".into(), ..Default::default() };
    let count = |events: &Arc<AtomicU64>| {
        let seen = events.clone();
        move |_: CallEvent| {
            seen.fetch_add(1, Ordering::Relaxed);
        }
    };

    // Baseline: the same turn, no log.
    let events = Arc::new(AtomicU64::new(0));
    let counting = count(&events);
    let sink: switchboard_core::EventSink = Arc::new(counting);
    let start = Instant::now();
    logged_turn_dispatcher().run_turn(request(), sink, TurnControl::approving_all()).await;
    let off = start.elapsed();
    let total = events.load(Ordering::Relaxed);

    // Each event written (one write(2)) under the turn's lock as it is emitted.
    let folder = tempfile::tempdir().unwrap();
    let store = Arc::new(SessionStore::open(folder.path().join("inline")).unwrap());
    store.create("s", "inline", 0).unwrap();
    let writing = store.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event| {
        writing.append("s", &SessionRecord::Event { turn_id: "t".into(), event }).unwrap();
    });
    let start = Instant::now();
    logged_turn_dispatcher().run_turn(request(), sink, TurnControl::approving_all()).await;
    let inline = start.elapsed();

    // The session's turn pipeline: logged in batches by the turn's own thread, then shown.
    let chats = ChatSessions::open(folder.path().join("piped")).unwrap();
    let session = chats.create("piped").unwrap();
    let shown = Arc::new(AtomicU64::new(0));
    let seen = shown.clone();
    let show: Show = Arc::new(move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
    });
    let turn = SessionTurn {
        session_id: session.id.clone(),
        turn_id: "t1".into(),
        message: "go".into(),
        ..Default::default()
    };
    let start = Instant::now();
    chats.run_turn(&logged_turn_dispatcher(), turn, switchboard_core::ApprovalPolicy::ApproveAll, show).await.unwrap();
    let piped = start.elapsed();
    let logged = chats.turn_events(&session.id, "t1").unwrap().len() as u64;
    assert_eq!(logged, total, "every event of the turn is in the log");
    assert!(shown.load(Ordering::Relaxed) >= total, "every event was shown");

    let rate = |elapsed: Duration| total as f64 / elapsed.as_secs_f64();
    println!(
        "(d) a turn of {LOGGED_DELEGATES} parallel delegates streaming {LOGGED_DELTAS} deltas each ({total} events):"
    );
    println!("    no session log                 {:>12.0} events/s  {:>8.1} ms", rate(off), off.as_secs_f64() * 1e3);
    println!(
        "    each event written under lock  {:>12.0} events/s  {:>8.1} ms  ({:.2}x the time with no log)",
        rate(inline),
        inline.as_secs_f64() * 1e3,
        inline.as_secs_f64() / off.as_secs_f64()
    );
    println!(
        "    the turn pipeline (batched)    {:>12.0} events/s  {:>8.1} ms  ({:.2}x the time with no log)",
        rate(piped),
        piped.as_secs_f64() * 1e3,
        piped.as_secs_f64() / off.as_secs_f64()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    nested_overhead().await;
    relay_throughput().await;
    memory_per_call().await;
    session_log_cost().await;
}

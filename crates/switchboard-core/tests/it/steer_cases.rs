//! Steering a running call (`TurnControl::steer_call`) against aimock on loopback:
//! a delegate whose model keeps calling tools until it sees "stop and summarise"
//! is sent that message and finishes with a summary, its usage counted; a message
//! the call ends before taking is reported as not taken; a CLI agent says why it
//! cannot be steered. Each message is sent from the event sink when a condition
//! holds (a child finished, a call started), never after a wait.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use switchboard_core::config::Limits;
use switchboard_core::{
    AgentConfig, CallEvent, CallStatus, Config, Dispatcher, EventKind, Provider, SteerRefusal, Steering, TurnControl,
    TurnRequest,
};

use crate::support::peer::{aimock, http_agent, Peer};
use crate::support::{assert_stream_invariants, entry};

const STEER: &str = "stop and summarise";

/// boss → worker → search: the worker calls `agent_search` at every step unless
/// the last user message says "stop and summarise".
fn looping_worker() -> Peer {
    aimock(json!({ "fixtures": [
        { "match": { "model": "boss-m", "hasToolResult": false },
          "response": { "toolCalls": [{ "id": "b1", "name": "agent_worker", "arguments": { "request": "find why the build broke" } }] } },
        { "match": { "model": "boss-m", "hasToolResult": true }, "response": { "content": "The worker reported back." } },
        { "match": { "model": "worker-m", "userMessage": STEER },
          "response": { "content": "Summary: one search so far, nothing found." } },
        { "match": { "model": "worker-m" },
          "response": { "toolCalls": [{ "id": "w1", "name": "agent_search", "arguments": { "request": "build logs" } }] } },
        { "match": { "model": "search-m" }, "response": { "content": "nothing relevant" } }
    ]}))
}

fn chain(peer: &Peer, worker_steps: u32) -> Config {
    let mut boss = http_agent("boss", peer.base.clone(), "boss-m");
    boss.tools = vec![entry("worker", "Digs into a problem.")];
    let mut worker = http_agent("worker", peer.base.clone(), "worker-m");
    worker.tools = vec![entry("search", "Searches.")];
    worker.limits = Some(Limits { max_steps: Some(worker_steps), ..Limits::default() });
    let mut config = Config {
        agents: vec![boss, worker, http_agent("search", peer.base.clone(), "search-m")],
        limits: Limits { max_depth: Some(2), ..Limits::default() },
        ..Config::default()
    };
    config.primary = Some("boss".into());
    config
}

/// Runs a turn whose sink steers the worker with `STEER` once its first search
/// finished; returns the events and what `steer_call` said.
async fn steered_turn(config: Config) -> (Vec<CallEvent>, Option<Result<(), SteerRefusal>>) {
    let control = TurnControl::approving_all();
    let events = Arc::new(Mutex::new(Vec::<CallEvent>::new()));
    let answer = Arc::new(Mutex::new(None));
    let (steering, recorded, said) = (control.clone(), events.clone(), answer.clone());
    let sink = Arc::new(move |event: CallEvent| {
        let mut events = recorded.lock().unwrap();
        let search_finished = event.agent == "search" && matches!(event.kind, EventKind::CallFinished { .. });
        events.push(event);
        let mut said = said.lock().unwrap();
        if search_finished && said.is_none() {
            let worker =
                events.iter().find(|event| event.agent == "worker").expect("the worker started").call_id.clone();
            *said = Some(steering.steer_call(&worker, STEER, "user"));
        }
    });
    let request = TurnRequest { message: "Why did the build break?".into(), ..TurnRequest::default() };
    Dispatcher::new(config).run_turn(request, sink, control).await;
    let events = events.lock().unwrap().clone();
    let said = answer.lock().unwrap().clone();
    (events, said)
}

fn finish_of<'a>(events: &'a [CallEvent], agent: &str) -> &'a EventKind {
    &events
        .iter()
        .rev()
        .find(|event| event.agent == agent && matches!(event.kind, EventKind::CallFinished { .. }))
        .unwrap()
        .kind
}

#[tokio::test]
async fn a_delegate_that_keeps_calling_tools_is_steered_to_a_summary() {
    let peer = looping_worker();
    let (events, said) = steered_turn(chain(&peer, 8)).await;
    assert_stream_invariants(&events);
    assert_eq!(said, Some(Ok(())));

    let started = events.iter().find(|event| event.agent == "worker").unwrap();
    assert!(matches!(&started.kind, EventKind::CallStarted { steering: Steering::NextStep, .. }), "{started:?}");
    let steered: Vec<&CallEvent> =
        events.iter().filter(|event| matches!(event.kind, EventKind::CallSteered { .. })).collect();
    assert_eq!(steered.len(), 1, "{steered:?}");
    assert_eq!(steered[0].agent, "worker");
    assert_eq!(
        steered[0].kind,
        EventKind::CallSteered { message: STEER.into(), by: "user".into(), taken: true, why: None }
    );
    // Without the message the worker would have searched until its 8 steps ran out.
    let searches =
        events.iter().filter(|event| event.agent == "search" && matches!(event.kind, EventKind::CallStarted { .. }));
    assert_eq!(searches.count(), 1);
    let EventKind::CallFinished { status, result, usage, steps, .. } = finish_of(&events, "worker") else {
        unreachable!()
    };
    assert_eq!(*status, CallStatus::Ok);
    assert_eq!(result.as_deref(), Some("Summary: one search so far, nothing found."));
    assert_eq!(*steps, 2);

    // The worker's second request carried the message last, after the tool result;
    // its usage counts both steps as aimock reported them.
    let journal = peer.get("/__aimock/journal").await;
    let worker_requests: Vec<&Value> =
        journal.as_array().unwrap().iter().filter(|entry| entry["body"]["model"] == "worker-m").collect();
    assert_eq!(worker_requests.len(), 2);
    let messages = worker_requests[1]["body"]["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap(), &json!({ "role": "user", "content": STEER }));
    assert_eq!(messages[messages.len() - 2]["role"], "tool");
    let usage = usage.expect("aimock reports usage");
    let first_step_only = events
        .iter()
        .filter_map(|event| match (&event.agent[..], &event.kind) {
            ("worker", EventKind::UsageUpdated { usage, .. }) => Some(usage.total_tokens),
            _ => None,
        })
        .find(|tokens| *tokens > 0)
        .unwrap();
    assert!(usage.total_tokens > first_step_only, "the steered step is counted: {usage:?} vs {first_step_only}");
    let EventKind::CallFinished { status, usage_total, .. } = finish_of(&events, "boss") else { unreachable!() };
    assert_eq!(*status, CallStatus::Ok);
    assert!(usage_total.unwrap().total_tokens > usage.total_tokens, "the boss's subtree holds the worker's usage");
}

/// A message sent when the call has no step left is reported as not taken, so
/// nothing the user sent goes missing silently.
#[tokio::test]
async fn a_message_the_call_ends_before_taking_is_reported_as_not_taken() {
    let peer = looping_worker();
    let (events, said) = steered_turn(chain(&peer, 1)).await;
    assert_stream_invariants(&events);
    assert_eq!(said, Some(Ok(())));
    let steered = events.iter().find(|event| matches!(event.kind, EventKind::CallSteered { .. })).unwrap();
    assert_eq!(
        steered.kind,
        EventKind::CallSteered { message: STEER.into(), by: "user".into(), taken: false, why: None }
    );
    let EventKind::CallFinished { status, .. } = finish_of(&events, "worker") else { unreachable!() };
    assert_eq!(*status, CallStatus::Limited);
    let finished =
        events.iter().position(|event| event.agent == "worker" && matches!(event.kind, EventKind::CallFinished { .. }));
    let reported = events.iter().position(|event| matches!(event.kind, EventKind::CallSteered { .. }));
    assert!(reported < finished, "reported before the worker's finish");
}

/// A CLI agent runs its own loop: its start says so, and a message sent to it
/// is refused with the same reason; an empty message and a finished call are refused too.
#[tokio::test]
async fn a_cli_agent_is_not_steerable_and_says_why() {
    let peer = aimock(json!({ "fixtures": [
        { "match": { "model": "boss-m", "hasToolResult": false },
          "response": { "toolCalls": [{ "id": "b1", "name": "agent_echoer", "arguments": { "request": "say hi" } }] } },
        { "match": { "model": "boss-m", "hasToolResult": true }, "response": { "content": "done" } }
    ]}));
    let mut boss = http_agent("boss", peer.base.clone(), "boss-m");
    boss.tools = vec![entry("echoer", "Echoes.")];
    let mut echoer = AgentConfig::new("echoer", Provider::Subprocess);
    echoer.command = Some("echo".into());
    let mut config = Config { agents: vec![boss, echoer], ..Config::default() };
    config.primary = Some("boss".into());
    let control = TurnControl::approving_all();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let (steering, said) = (control.clone(), answers.clone());
    let sink = Arc::new(move |event: CallEvent| {
        if let EventKind::CallStarted { steering: how, .. } = &event.kind {
            let answer = steering.steer_call(&event.call_id, "change course", "user");
            let empty = steering.steer_call(&event.call_id, "  ", "user");
            said.lock().unwrap().push((event.agent.clone(), how.clone(), answer, empty));
        }
        if let EventKind::CallFinished { .. } = &event.kind {
            let after = steering.steer_call(&event.call_id, "too late", "user");
            said.lock().unwrap().push((format!("{} finished", event.agent), Steering::NextStep, after, Ok(())));
        }
    });
    let request = TurnRequest { message: "go".into(), ..TurnRequest::default() };
    let outcome = Dispatcher::new(config).run_turn(request, sink, control).await;
    assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    let said = answers.lock().unwrap().clone();
    let (_, how, answer, empty) = said.iter().find(|(agent, ..)| agent == "echoer").unwrap();
    let Steering::Not { why } = how else { panic!("{how:?}") };
    assert!(why.contains("\"echoer\" runs its own loop") && why.contains("in its arguments"), "{why}");
    assert_eq!(answer, &Err(SteerRefusal::NotSteerable(why.clone())));
    assert!(matches!(empty, Err(SteerRefusal::BadMessage(_))), "{empty:?}");
    let (_, how, answer, _) = said.iter().find(|(agent, ..)| agent == "boss").unwrap();
    assert_eq!(how, &Steering::NextStep);
    assert_eq!(answer, &Ok(()), "the boss's loop takes messages");
    let finished: Vec<_> = said.iter().filter(|(agent, ..)| agent.ends_with(" finished")).collect();
    assert_eq!(finished.len(), 2);
    assert!(finished.iter().all(|(_, _, after, _)| after == &Err(SteerRefusal::NotRunning)), "{finished:?}");
}

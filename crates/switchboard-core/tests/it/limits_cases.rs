//! Each limit against a model that ignores it: a child at the depth limit that
//! calls an agent tool it was not offered, a caller asking for more calls at once
//! than `max_parallel` allows (the calls must overlap, and never more of them than
//! allowed), a model that never stops calling tools (`max_steps`); and the fence's
//! delimiter, drawn from the real random source by two dispatchers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use switchboard_core::contract::{DeltaSink, ModelReply, ModelRequest, Runner, RunnerError};
use switchboard_core::{CallErrorKind, CallEvent, CallStatus, Dispatcher, EventKind, Limits, TurnControl};
use tokio::sync::Barrier;

use crate::support::{agent, call, config, entry, run, Scripted, Step};

fn started_at_depth(events: &[CallEvent], depth: u32) -> Vec<String> {
    events
        .iter()
        .filter(|event| event.depth == depth && matches!(event.kind, EventKind::CallStarted { .. }))
        .map(|event| event.agent.clone())
        .collect()
}

/// A child at the depth limit (offered nothing) calls `agent_leaf` anyway: the
/// call is refused as not offered, no grandchild starts, and the child goes on.
#[tokio::test]
async fn a_call_invented_past_the_depth_limit_is_refused_and_starts_nothing() {
    let mut config = config(
        vec![agent("primary"), agent("child"), agent("leaf")],
        vec![entry("child", "Child."), entry("leaf", "Leaf.")],
    );
    config.limits.max_depth = Some(1);
    let dispatcher = Dispatcher::new(config);
    let primary = Scripted::new(vec![Step::Call(vec![call("agent_child", "go")]), Step::Say("done")]);
    let child = Scripted::new(vec![Step::Call(vec![call("agent_leaf", "deeper")]), Step::Say("child done")]);
    let leaf = Scripted::new(vec![Step::Say("leaf ran")]);
    for (name, runner) in [("primary", &primary), ("child", &child), ("leaf", &leaf)] {
        dispatcher.runners().insert(name, runner.clone());
    }
    let (outcome, events) = run(&dispatcher, Some("primary"), "start", TurnControl::approving_all()).await;
    assert_eq!(outcome.status, CallStatus::Ok);
    // The refused call shows in the tree (so the user sees what the model tried),
    // and ends there: refused before its agent ran.
    let below: Vec<(String, CallStatus, Option<CallErrorKind>)> = events
        .iter()
        .filter(|event| event.depth == 2)
        .filter_map(|event| match &event.kind {
            EventKind::CallFinished { status, error, .. } => {
                Some((event.agent.clone(), *status, error.as_ref().map(|error| error.kind)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(below.len(), started_at_depth(&events, 2).len(), "{events:#?}");
    assert!(
        below.iter().all(|(_, status, kind)| *status != CallStatus::Ok && *kind == Some(CallErrorKind::NotOffered)),
        "{below:?}"
    );
    assert!(leaf.requests.lock().unwrap().is_empty(), "the leaf's model was never asked");
    assert!(child.requests.lock().unwrap()[0].tools.is_empty(), "the child was offered no agent tools");
    // The child's next request carries the refusal as the tool result.
    let second = format!("{:?}", child.requests.lock().unwrap()[1].messages);
    assert!(second.contains("was not offered to this agent here"), "{second}");
    let refused = events.iter().any(|event| {
        matches!(&event.kind, EventKind::CallFinished { error: Some(error), .. } if error.kind == CallErrorKind::NotOffered)
    });
    assert!(refused, "the refusal is reported as a finished call with not_offered");
}

/// Counts how many of its calls run at once; the first `meet` calls wait for each
/// other (so a dispatcher that ran them one after another would never get past
/// the barrier, and the test's guard would fail it).
struct Overlap {
    running: AtomicUsize,
    most: AtomicUsize,
    entered: AtomicUsize,
    meet: usize,
    barrier: Barrier,
}

#[async_trait]
impl Runner for Overlap {
    async fn stream(&self, _request: &ModelRequest, _on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        if self.entered.fetch_add(1, Ordering::SeqCst) < self.meet {
            self.barrier.wait().await;
        }
        // Let any call the dispatcher wrongly admitted get in before this one leaves.
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(ModelReply { text: "worked".into(), ..ModelReply::default() })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn max_parallel_calls_overlap_and_never_exceed_the_limit() {
    for limit in [1usize, 2, 3] {
        let mut config = config(vec![agent("primary"), agent("worker")], vec![entry("worker", "Works.")]);
        config.limits = Limits { max_parallel: Some(limit as u32), max_calls_per_turn: Some(20), ..Limits::default() };
        let dispatcher = Dispatcher::new(config);
        let calls = (0..6).map(|index| call("agent_worker", if index % 2 == 0 { "even" } else { "odd" })).collect();
        let primary = Scripted::new(vec![Step::Call(calls), Step::Say("all done")]);
        let worker = Arc::new(Overlap {
            running: 0.into(),
            most: 0.into(),
            entered: 0.into(),
            meet: limit,
            barrier: Barrier::new(limit),
        });
        dispatcher.runners().insert("primary", primary.clone());
        dispatcher.runners().insert("worker", worker.clone());
        // A guard against a hang, not a timing assertion: run serially, the first
        // `limit` calls would wait at the barrier for ever.
        let (outcome, events) = tokio::time::timeout(
            Duration::from_secs(60),
            run(&dispatcher, Some("primary"), "go", TurnControl::approving_all()),
        )
        .await
        .unwrap_or_else(|_| panic!("with max_parallel {limit}, {limit} calls never ran at the same time"));
        assert_eq!(outcome.status, CallStatus::Ok);
        assert_eq!(started_at_depth(&events, 1).len(), 6);
        assert_eq!(worker.most.load(Ordering::SeqCst), limit, "at most, and at some point exactly, {limit} at once");
    }
}

/// A model that calls a tool at every step is stopped after `max_steps` model
/// requests with a `limited` error, its text so far kept.
#[tokio::test]
async fn a_model_that_never_stops_calling_tools_is_stopped_at_max_steps() {
    let mut config = config(vec![agent("primary"), agent("worker")], vec![entry("worker", "Works.")]);
    config.limits = Limits { max_steps: Some(3), max_calls_per_turn: Some(50), ..Limits::default() };
    let dispatcher = Dispatcher::new(config);
    let steps = (0..10).map(|_| Step::Call(vec![call("agent_worker", "again")])).collect();
    let primary = Scripted::new(steps);
    dispatcher.runners().insert("primary", primary.clone());
    dispatcher.runners().insert("worker", Scripted::new(vec![Step::Say("ok"); 10]));
    let (outcome, events) = run(&dispatcher, Some("primary"), "loop", TurnControl::approving_all()).await;
    assert_eq!(primary.requests.lock().unwrap().len(), 3, "exactly max_steps model requests");
    assert_eq!(outcome.error.as_ref().map(|error| error.kind), Some(CallErrorKind::Limited), "{:?}", outcome.error);
    assert!(outcome.error.unwrap().message.contains("limits.max_steps"));
    assert_eq!(started_at_depth(&events, 1).len(), 3, "one delegation per step, none after the last");
}

/// Two dispatchers built as the app builds them (no injected sources) fence their
/// results with different delimiters, each 128 bits of hex.
#[tokio::test]
async fn two_dispatchers_draw_different_fence_delimiters_from_the_real_source() {
    let mut delimiters = Vec::new();
    for _ in 0..2 {
        let dispatcher =
            Dispatcher::new(config(vec![agent("primary"), agent("worker")], vec![entry("worker", "Works.")]));
        dispatcher
            .runners()
            .insert("primary", Scripted::new(vec![Step::Call(vec![call("agent_worker", "x")]), Step::Say("ok")]));
        dispatcher.runners().insert("worker", Scripted::new(vec![Step::Say("result")]));
        let (_, events) = run(&dispatcher, Some("primary"), "go", TurnControl::approving_all()).await;
        let delivered = events
            .iter()
            .find_map(|event| match &event.kind {
                EventKind::CallFinished { delivered: Some(delivered), .. } if event.depth == 1 => {
                    Some(delivered.clone())
                }
                _ => None,
            })
            .expect("the worker's result was delivered fenced");
        let nonce: String = delivered
            .split("<<<AGENT_RESULT ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(|word| word.trim_matches(|c: char| !c.is_ascii_hexdigit()).to_string())
            .unwrap_or_default();
        assert!(nonce.len() == 32 && nonce.chars().all(|c| c.is_ascii_hexdigit()), "{delivered}");
        delimiters.push(nonce);
    }
    assert_ne!(delimiters[0], delimiters[1], "the same delimiter twice: not drawn at random");
}

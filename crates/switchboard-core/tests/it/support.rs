//! Fakes and builders shared by the suites: scripted runners that record what they
//! were sent, small config builders, an exact dispatcher, one turn run and
//! recorded, and the invariants every event stream keeps.

pub mod peer;
pub mod world;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use switchboard_core::config::{AgentConfig, AgentToolEntry, Config, Provider};
use switchboard_core::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use switchboard_core::{CallEvent, Dispatcher, EventKind, TurnControl, TurnOutcome, TurnRequest, Usage};

pub fn agent(name: &str) -> AgentConfig {
    let mut agent = AgentConfig::new(name, Provider::Demo);
    agent.model = Some(format!("fake-{name}"));
    agent
}

pub fn entry(agent: &str, description: &str) -> AgentToolEntry {
    AgentToolEntry::new(agent, description)
}

pub fn disabled(agent: &str, description: &str) -> AgentToolEntry {
    let mut entry = AgentToolEntry::new(agent, description);
    entry.enabled = Some(false);
    entry
}

pub fn config(agents: Vec<AgentConfig>, agent_tools: Vec<AgentToolEntry>) -> Config {
    Config { agents, agent_tools, ..Config::default() }
}

/// One scripted step: text to stream, tool calls to make, usage to report, or an error.
#[derive(Clone)]
pub enum Step {
    Say(&'static str),
    Call(Vec<(&'static str, Value)>),
    Fail(&'static str),
    /// Asks the user a question (as an A2A task in `input-required` does), then
    /// says "answer: <answer>", or fails as declined.
    Ask(&'static str),
    /// Streams `n` deltas with `pause` between them, then says "slow done".
    Slow {
        deltas: usize,
        pause: Duration,
    },
}

/// A runner that plays a script, one step per model request, and records requests.
pub struct Scripted {
    steps: Mutex<VecDeque<Step>>,
    pub requests: Mutex<Vec<ModelRequest>>,
    usage: Usage,
}

impl Scripted {
    pub fn new(steps: Vec<Step>) -> Arc<Scripted> {
        Arc::new(Scripted {
            steps: Mutex::new(steps.into()),
            requests: Mutex::new(Vec::new()),
            usage: Usage::new(10, 5),
        })
    }
}

#[async_trait]
impl Runner for Scripted {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        self.requests.lock().unwrap().push(request.clone());
        let step = self.steps.lock().unwrap().pop_front().unwrap_or(Step::Say("(script ended)"));
        match step {
            Step::Say(text) => {
                for piece in text.split_inclusive(' ') {
                    on_delta(ModelDelta::Text(piece.to_string()));
                }
                Ok(ModelReply { text: text.to_string(), tool_calls: vec![], usage: Some(self.usage), cost: None })
            }
            Step::Call(calls) => Ok(ModelReply {
                text: String::new(),
                tool_calls: calls
                    .into_iter()
                    .enumerate()
                    .map(|(index, (name, arguments))| ToolCall::new(format!("tc{index}"), name, arguments.to_string()))
                    .collect(),
                usage: Some(self.usage),
                cost: None,
            }),
            Step::Fail(message) => Err(RunnerError::Unreachable {
                url: "http://127.0.0.1:9/v1/chat/completions".into(),
                message: message.into(),
            }),
            Step::Ask(question) => {
                let (slot, answer) = switchboard_core::contract::AnswerSlot::new();
                on_delta(ModelDelta::InputRequired { question: question.into(), answer: slot });
                match answer.await {
                    Ok(Some(answer)) => {
                        let text = format!("answer: {answer}");
                        Ok(ModelReply { text, tool_calls: vec![], usage: Some(self.usage), cost: None })
                    }
                    _ => Err(RunnerError::Remote { url: "a2a://scripted".into(), message: "declined".into() }),
                }
            }
            Step::Slow { deltas, pause } => {
                for index in 0..deltas {
                    on_delta(ModelDelta::Text(format!("d{index} ")));
                    tokio::time::sleep(pause).await;
                }
                Ok(ModelReply { text: "slow done".into(), tool_calls: vec![], usage: Some(self.usage), cost: None })
            }
        }
    }
}

pub fn call(name: &'static str, request: &str) -> (&'static str, Value) {
    (name, json!({ "request": request }))
}

/// Collects the events of a turn, and lets a test wait for one (no polling).
#[derive(Clone)]
pub struct Recorder {
    pub events: Arc<Mutex<Vec<CallEvent>>>,
    arrived: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder { events: Arc::default(), arrived: Arc::new(tokio::sync::watch::channel(0).0) }
    }
}

impl Recorder {
    pub fn sink(&self) -> switchboard_core::EventSink {
        let (events, arrived) = (self.events.clone(), self.arrived.clone());
        Arc::new(move |event| {
            let count = {
                let mut events = events.lock().unwrap();
                events.push(event);
                events.len()
            };
            arrived.send_replace(count);
        })
    }

    pub fn take(&self) -> Vec<CallEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Waits until the events so far satisfy `condition` (woken by each event; a
    /// guard of 60 s fails a test that would otherwise hang).
    pub async fn wait_for(&self, what: &str, condition: impl Fn(&[CallEvent]) -> bool) {
        let mut arrivals = self.arrived.subscribe();
        let waiting = async {
            loop {
                if condition(&self.events.lock().unwrap()) {
                    return;
                }
                if arrivals.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), waiting)
            .await
            .unwrap_or_else(|_| panic!("never happened: {what}"));
    }
}

/// `dispatcher` with a clock that ticks one millisecond a reading from 1,000 and
/// the fixed nonce `NONCE`, so a case's events are the same on every run.
pub fn exact(dispatcher: Dispatcher) -> Dispatcher {
    let clock = Arc::new(std::sync::atomic::AtomicU64::new(1_000));
    dispatcher.with_sources(
        Arc::new(move || clock.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
        Arc::new(|| "NONCE".to_string()),
    )
}

/// One turn of `message` to `agent` (the primary when `None`) under `control`:
/// its outcome and every event, which keep the stream invariants whatever else a
/// case checks.
pub async fn run(
    dispatcher: &Dispatcher,
    agent: Option<&str>,
    message: &str,
    control: TurnControl,
) -> (TurnOutcome, Vec<CallEvent>) {
    let recorder = Recorder::default();
    let request = TurnRequest { agent: agent.map(String::from), message: message.into(), ..TurnRequest::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), control).await;
    let events = recorder.take();
    assert_stream_invariants(&events);
    (outcome, events)
}

/// Every stream invariant that holds for any turn.
pub fn assert_stream_invariants(events: &[CallEvent]) {
    assert!(!events.is_empty());
    for pair in events.windows(2) {
        assert!(pair[1].seq == pair[0].seq + 1, "seq is gapless and increasing: {} then {}", pair[0].seq, pair[1].seq);
    }
    assert!(
        matches!(events[0].kind, EventKind::CallStarted { .. })
            && events[0].parent_id.is_none()
            && events[0].depth == 0
    );
    let last = events.last().unwrap();
    assert!(
        matches!(last.kind, EventKind::CallFinished { .. }) && last.parent_id.is_none(),
        "the root's call_finished is last"
    );
    let mut started: Vec<&str> = Vec::new();
    let mut finished: Vec<&str> = Vec::new();
    for event in events {
        match &event.kind {
            EventKind::CallStarted { .. } => {
                if let Some(parent) = &event.parent_id {
                    assert!(
                        started.contains(&parent.as_str()) && !finished.contains(&parent.as_str()),
                        "a child starts inside its running parent"
                    );
                }
                started.push(&event.call_id);
            }
            EventKind::CallFinished { .. } => {
                assert!(started.contains(&event.call_id.as_str()));
                assert!(!finished.contains(&event.call_id.as_str()), "one call_finished per call");
                finished.push(&event.call_id);
            }
            _ => assert!(
                started.contains(&event.call_id.as_str()) && !finished.contains(&event.call_id.as_str()),
                "events of a call come between its start and its finish: {event:?}"
            ),
        }
    }
    assert_eq!(started.len(), finished.len(), "every call finishes");
    // Usage: every call's total is its own usage plus its children's totals.
    for event in events {
        if let EventKind::CallFinished { usage, usage_total: Some(total), .. } = &event.kind {
            let mut expected = usage.unwrap_or_default();
            for child in events.iter().filter(|child| child.parent_id.as_deref() == Some(&event.call_id)) {
                if let EventKind::CallFinished { usage_total: Some(child_total), .. } = &child.kind {
                    expected.add(child_total);
                }
            }
            assert_eq!(*total, expected, "usage total of {} ({})", event.call_id, event.agent);
        }
    }
    // Usage is live: a call that used tokens said so in a `usage_updated` before it
    // finished, and its last live figures are its final ones.
    for (index, event) in events.iter().enumerate() {
        let EventKind::CallFinished { usage_total: Some(total), .. } = &event.kind else { continue };
        if total.total_tokens == 0 {
            continue;
        }
        let last_live = events[..index].iter().rev().find_map(|earlier| match &earlier.kind {
            EventKind::UsageUpdated { usage_total, .. } if earlier.call_id == event.call_id => Some(*usage_total),
            _ => None,
        });
        assert_eq!(last_live, Some(*total), "live usage of {} ({}) before it finished", event.call_id, event.agent);
    }
}

/// A turn's call tree as text, one line a call in the order the calls started,
/// each child under its parent: agent, role and tool, how it ended (with its error
/// kind) and the start of its answer or error; below it, what the user or the
/// policy answered and where it escalated. What a case's expected tree is
/// written as (`expect![[...]]`), so a case reads fixture → tree.
pub fn render_tree(events: &[CallEvent]) -> String {
    let word = |value: &dyn erased::Word| value.word();
    let mut lines = Vec::new();
    let mut order: Vec<&CallEvent> =
        events.iter().filter(|event| matches!(event.kind, EventKind::CallStarted { .. })).collect();
    order.sort_by_key(|event| event.seq);
    fn children<'a>(order: &[&'a CallEvent], parent: Option<&str>) -> Vec<&'a CallEvent> {
        order.iter().copied().filter(|event| event.parent_id.as_deref() == parent).collect()
    }
    let mut stack: Vec<&CallEvent> = children(&order, None).into_iter().rev().collect();
    while let Some(start) = stack.pop() {
        let indent = "  ".repeat(start.depth as usize);
        let EventKind::CallStarted { role, tool_name, .. } = &start.kind else { unreachable!() };
        let how = tool_name.as_deref().map(|tool| format!(" via {tool}")).unwrap_or_default();
        let mut line = format!("{indent}{} [{}{how}]", start.agent, word(role));
        let mut below = Vec::new();
        for event in events.iter().filter(|event| event.call_id == start.call_id) {
            match &event.kind {
                EventKind::ApprovalResolved { decision, by } => {
                    below.push(format!("{indent}  ? approval: {} by {by}", word(decision)));
                }
                EventKind::InputAnswered { answer, by } => {
                    below.push(format!("{indent}  ? input: {} by {by}", answer.as_deref().unwrap_or("declined")));
                }
                EventKind::Escalated { to, .. } => below.push(format!("{indent}  ^ escalated to {to}")),
                EventKind::CallFinished { status, result, error, .. } => {
                    let said = match error {
                        Some(error) => format!("{}: {}", word(&error.kind), error.message),
                        None => result.clone().unwrap_or_default(),
                    };
                    let said: String = said.replace('\n', " ").chars().take(70).collect();
                    line = format!("{line} {}: {said}", word(status));
                }
                _ => {}
            }
        }
        lines.push(line);
        lines.extend(below);
        stack.extend(children(&order, Some(&start.call_id)).into_iter().rev());
    }
    lines.join("\n") + "\n"
}

mod erased {
    /// The word a value serializes as (a status, a role, an error kind).
    pub trait Word {
        fn word(&self) -> String;
    }

    impl<T: serde::Serialize> Word for T {
        fn word(&self) -> String {
            match serde_json::to_value(self) {
                Ok(serde_json::Value::String(word)) => word,
                other => format!("{other:?}"),
            }
        }
    }
}

/// A user turn `turn_id` of session `session_id` for the primary (no handoff).
pub fn session_turn(session_id: &str, turn_id: &str, message: &str) -> switchboard_core::sessions::SessionTurn {
    switchboard_core::sessions::SessionTurn {
        session_id: session_id.into(),
        turn_id: turn_id.into(),
        agent: None,
        handoff_typed: false,
        message: message.into(),
    }
}

/// A shell that is shown only a turn's events (its start and end left out).
pub fn on_events(show: impl Fn(CallEvent) + Send + Sync + 'static) -> switchboard_core::sessions::Show {
    Arc::new(move |update| {
        if let switchboard_core::sessions::TurnUpdate::Event { event } = update {
            show(*event);
        }
    })
}

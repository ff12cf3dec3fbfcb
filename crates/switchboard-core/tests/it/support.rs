//! Fakes and builders shared by the suites: scripted runners that record what they
//! were sent, and small config builders.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use switchboard_core::config::{AgentConfig, AgentToolEntry, Config, Provider};
use switchboard_core::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use switchboard_core::{CallEvent, Usage};

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

//! The native `anthropic` provider against aimock's Messages API on loopback: a
//! primary that streams, calls a tool-agent through `tool_use` and answers from the
//! `tool_result`, with its usage counted; the same provider as a tool-agent; and
//! the API's error said in its own words.

use serde_json::json;
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallStatus, Config, Dispatcher, EventKind, Provider, TurnControl, TurnRequest,
};

use crate::support::peer::aimock;
use crate::support::{agent, assert_stream_invariants, Recorder, Scripted, Step};

fn anthropic_agent(name: &str, base: &str, model: &str) -> AgentConfig {
    let mut agent = AgentConfig::new(name, Provider::Anthropic);
    agent.url = Some(base.to_string());
    agent.model = Some(model.into());
    agent.timeout_secs = Some(20);
    agent
}

#[tokio::test]
async fn an_anthropic_primary_streams_calls_a_tool_agent_and_counts_its_usage() {
    let peer = aimock(json!({ "fixtures": [
        { "match": { "model": "claude-lead", "hasToolResult": true },
          "response": { "content": "The helper says there are three files.", "usage": { "input_tokens": 40, "output_tokens": 8 } } },
        { "match": { "model": "claude-lead", "hasToolResult": false },
          "response": { "toolCalls": [ { "id": "toolu_1", "name": "agent_helper", "arguments": { "request": "count the files" } } ],
                        "usage": { "input_tokens": 30, "output_tokens": 5 } } },
        { "match": { "model": "claude-tool" }, "response": { "content": "Forty-two.", "usage": { "input_tokens": 12, "output_tokens": 3 } } },
        { "match": { "model": "claude-refused" }, "response": { "status": 401,
          "error": { "type": "authentication_error", "message": "invalid x-api-key" } } }
    ]}));
    let mut config = Config {
        agents: vec![anthropic_agent("lead", &peer.base, "claude-lead"), agent("helper")],
        agent_tools: vec![AgentToolEntry::new("helper", "Counts files.")],
        ..Config::default()
    };
    config.primary = Some("lead".into());
    let dispatcher = Dispatcher::new(config);
    dispatcher.runners().insert("helper", Scripted::new(vec![Step::Say("There are 3 files.")]));
    let recorder = Recorder::default();
    let request = TurnRequest { message: "How many files are there?".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    let events = recorder.take();
    assert_stream_invariants(&events);
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (CallStatus::Ok, "The helper says there are three files."),
        "{:?}",
        outcome.error
    );
    let helper_input = events
        .iter()
        .find_map(|event| match &event.kind {
            EventKind::CallStarted { input: Some(input), .. } if event.agent == "helper" => Some(input.clone()),
            _ => None,
        })
        .expect("the tool_use block became a tool-agent call");
    assert_eq!(helper_input["request"], "count the files");
    let streamed = events
        .iter()
        .filter(|event| event.agent == "lead" && matches!(event.kind, EventKind::TextDelta { .. }))
        .count();
    assert!(streamed > 1, "the answer streamed in pieces: {streamed}");
    let lead_usage = events
        .iter()
        .find_map(|event| match &event.kind {
            EventKind::CallFinished { usage, .. } if event.agent == "lead" => *usage,
            _ => None,
        })
        .expect("the primary's usage");
    assert_eq!((lead_usage.input_tokens, lead_usage.output_tokens), (70, 13), "both steps counted, once each");

    // The same provider as a tool-agent, called by another primary.
    let mut config = Config {
        agents: vec![agent("boss"), anthropic_agent("sage", &peer.base, "claude-tool")],
        agent_tools: vec![AgentToolEntry::new("sage", "Answers.")],
        ..Config::default()
    };
    config.primary = Some("boss".into());
    let dispatcher = Dispatcher::new(config);
    let call = crate::support::call("agent_sage", "what is six times seven?");
    dispatcher.runners().insert("boss", Scripted::new(vec![Step::Call(vec![call]), Step::Say("done")]));
    let recorder = Recorder::default();
    let request = TurnRequest { message: "ask the sage".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.error);
    let sage = recorder
        .take()
        .into_iter()
        .find_map(|event| match event.kind {
            EventKind::CallFinished { status, result, usage, .. } if event.agent == "sage" => {
                Some((status, result, usage))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!((sage.0, sage.1.as_deref()), (CallStatus::Ok, Some("Forty-two.")));
    assert_eq!(sage.2.map(|usage| (usage.input_tokens, usage.output_tokens)), Some((12, 3)));

    // The API's error in its words.
    let mut config =
        Config { agents: vec![anthropic_agent("refused", &peer.base, "claude-refused")], ..Config::default() };
    config.primary = Some("refused".into());
    let outcome = Dispatcher::new(config)
        .run_turn(
            TurnRequest { message: "hi".into(), ..Default::default() },
            Recorder::default().sink(),
            TurnControl::approving_all(),
        )
        .await;
    let error = outcome.error.expect("refused").message;
    assert!(error.contains("401") && error.contains("authentication_error: invalid x-api-key"), "{error}");
}

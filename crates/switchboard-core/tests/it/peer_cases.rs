//! The `local` runner and the dispatcher against independent OpenAI-compatible
//! servers on loopback: `@copilotkit/aimock` (npm, JSON fixtures, request journal)
//! and `llmock` (PyPI, a scenario queue of faults). `make setup` installs both
//! (tests/peers/node_modules, .venv); each test starts its own server and the
//! server is killed when the test ends.

use std::process::Command;

use serde_json::{json, Value};
use switchboard_core::contract::{Message, ModelDelta, ModelRequest, Runner, RunnerError};
use switchboard_core::runner::local::LocalRunner;
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallErrorKind, CallStatus, Config, Dispatcher, EventKind, Provider, TurnControl,
    TurnRequest,
};

use crate::support::peer::{aimock, free_port, http_agent, repository_root, Peer};
use crate::support::{assert_stream_invariants, Recorder};

fn llmock() -> Peer {
    let folder = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut command = Command::new(repository_root().join(".venv/bin/llmock"));
    command.args([
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--response-style",
        "static",
        "--log-level",
        "warning",
    ]);
    Peer::start(command, port, folder)
}

async fn step(
    runner: &LocalRunner,
    request: &ModelRequest,
) -> (Result<switchboard_core::contract::ModelReply, RunnerError>, String) {
    let mut streamed = String::new();
    let mut on_delta = |delta: ModelDelta| {
        if let ModelDelta::Text(text) = delta {
            streamed.push_str(&text);
        }
    };
    let reply = runner.stream(request, &mut on_delta).await;
    (reply, streamed)
}

fn hello() -> ModelRequest {
    ModelRequest { messages: vec![Message::user("hello")], ..ModelRequest::default() }
}

/// The "done when", over real HTTP: the primary calls two tool-agents at
/// once, one fails; both results come back in order, the error is structured, the
/// events form one ordered stream, usage adds up, and the children were sent only
/// their request.
#[tokio::test]
async fn two_parallel_tool_agents_one_failing_against_aimock() {
    let peer = aimock(json!({ "fixtures": [
        { "match": { "model": "primary-m", "hasToolResult": false },
          "response": { "toolCalls": [
            { "id": "call_1", "name": "agent_good", "arguments": { "request": "summarise the plan" } },
            { "id": "call_2", "name": "agent_bad", "arguments": { "request": "break", "context": { "attempt": 1 } } } ] } },
        { "match": { "model": "primary-m", "hasToolResult": true }, "response": { "content": "Both came back." } },
        { "match": { "model": "good-m" }, "response": { "content": "The plan, summarised." } },
        { "match": { "model": "bad-m" }, "response": { "error": { "message": "boom", "type": "server_error" }, "status": 500 } }
    ]}));
    let key_variable = "SWITCHBOARD_TEST_AIMOCK_KEY";
    // Set before any thread reads the environment in this test; the name is unique to it.
    std::env::set_var(key_variable, "secret-value");
    let mut primary = http_agent("primary", peer.base.clone(), "primary-m");
    primary.api_key_env = Some(key_variable.into());
    primary.system_prompt = Some("You are the primary.".into());
    let mut config = Config {
        agents: vec![
            primary,
            http_agent("good", format!("{}/v1", peer.base), "good-m"),
            http_agent("bad", peer.base.clone(), "bad-m"),
        ],
        agent_tools: vec![AgentToolEntry::new("good", "Good at plans."), AgentToolEntry::new("bad", "Always fails.")],
        ..Config::default()
    };
    config.primary = Some("primary".into());
    let dispatcher = Dispatcher::new(config);
    let recorder = Recorder::default();
    let history = vec![Message::user("an earlier question"), Message::assistant("an earlier answer")];
    let outcome = dispatcher
        .run_turn(
            TurnRequest {
                agent: None,
                history,
                message: "Plan it and break it.".into(),
                reuse: vec![],
                continuation: None,
            },
            recorder.sink(),
            TurnControl::approving_all(),
        )
        .await;
    let events = recorder.take();
    assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    assert_eq!(outcome.text, "Both came back.");
    assert_stream_invariants(&events);

    let bad = events
        .iter()
        .find(|event| event.agent == "bad" && matches!(event.kind, EventKind::CallFinished { .. }))
        .unwrap();
    match &bad.kind {
        EventKind::CallFinished { status, error, .. } => {
            assert_eq!(*status, CallStatus::Error);
            let error = error.as_ref().unwrap();
            assert_eq!(error.kind, CallErrorKind::Http);
            assert!(error.message.contains("500") && error.message.contains("boom"), "{}", error.message);
        }
        _ => unreachable!(),
    }
    match &events.last().unwrap().kind {
        EventKind::CallFinished { usage, usage_total, .. } => {
            let own = usage.expect("aimock reports usage with include_usage");
            assert!(own.total_tokens > 0);
            assert!(usage_total.unwrap().total_tokens > own.total_tokens, "the good child's usage rolled up");
        }
        _ => unreachable!(),
    }

    let journal = peer.get("/__aimock/journal").await;
    let requests: Vec<&Value> = journal.as_array().unwrap().iter().collect();
    let of_model =
        |model: &str| requests.iter().filter(|entry| entry["body"]["model"] == model).copied().collect::<Vec<_>>();
    let primary_requests = of_model("primary-m");
    assert_eq!(primary_requests.len(), 2);
    let first = &primary_requests[0];
    // aimock redacts the header's value in its journal; the exact value is checked on
    // a raw loopback server in `local_runner_cases`.
    assert_eq!(first["headers"]["authorization"], "[REDACTED]", "the primary's key is sent");
    assert_eq!(first["body"]["stream"], true);
    assert_eq!(first["body"]["stream_options"]["include_usage"], true);
    let offered: Vec<&str> = first["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, vec!["agent_good", "agent_bad"]);
    let tool_results: Vec<(&str, &str)> = primary_requests[1]["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| (message["tool_call_id"].as_str().unwrap(), message["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tool_results.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        vec!["call_1", "call_2"],
        "results in the order asked for"
    );
    assert!(tool_results[0].1.contains("The plan, summarised.") && tool_results[0].1.contains("status=\"ok\""));
    assert!(tool_results[1].1.contains("status=\"error\"") && tool_results[1].1.contains("\"kind\":\"http\""));

    // The children saw their request (and labelled context) only: no history, no system prompt, no tools.
    let good = of_model("good-m");
    assert_eq!(good.len(), 1);
    assert_eq!(good[0]["body"]["messages"], json!([{ "role": "user", "content": "summarise the plan" }]));
    assert!(good[0]["body"].get("tools").is_none());
    assert!(good[0]["headers"].get("authorization").is_none(), "the primary's key is not sent to another agent");
    let bad_messages = of_model("bad-m")[0]["body"]["messages"].as_array().unwrap().clone();
    assert_eq!(bad_messages.len(), 2);
    assert!(bad_messages[0]["content"].as_str().unwrap().starts_with("Context from the calling agent \"primary\""));
    assert_eq!(bad_messages[1], json!({ "role": "user", "content": "break" }));
}

#[tokio::test]
async fn aimock_streams_tool_calls_usage_and_http_errors() {
    let peer = aimock(json!({ "fixtures": [
        { "match": { "userMessage": "weather" },
          "response": { "toolCalls": [
            { "id": "call_a", "name": "get_weather", "arguments": { "city": "Paris" } },
            { "id": "call_b", "name": "get_time", "arguments": { "tz": "Europe/Paris" } } ] } },
        { "match": { "userMessage": "limit" }, "response": { "error": { "message": "Rate limited", "type": "rate_limit_error" }, "status": 429 } },
        { "match": { "userMessage": "cut" }, "response": { "content": "This answer will be cut off part way." }, "latency": 40, "disconnectAfterMs": 120 },
        { "match": { "userMessage": "hello" }, "response": { "content": "Hi there, how can I help you today?" } }
    ]}));
    let runner = LocalRunner::new(&http_agent("a", peer.base.clone(), "m")).unwrap();

    let (reply, streamed) = step(&runner, &hello()).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Hi there, how can I help you today?");
    assert_eq!(streamed, reply.text, "streamed deltas add up to the text");
    assert!(reply.usage.unwrap().total_tokens > 0, "usage read from the chunk whose choices is empty");

    let weather = ModelRequest { messages: vec![Message::user("weather in Paris?")], ..ModelRequest::default() };
    let reply = step(&runner, &weather).await.0.unwrap();
    let calls: Vec<(&str, &str, Value)> = reply
        .tool_calls
        .iter()
        .map(|call| {
            (call.id.as_str(), call.function.name.as_str(), serde_json::from_str(&call.function.arguments).unwrap())
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a", "get_weather", json!({ "city": "Paris" })),
            ("call_b", "get_time", json!({ "tz": "Europe/Paris" }))
        ],
        "tool call deltas assembled by index"
    );

    let limited = ModelRequest { messages: vec![Message::user("limit")], ..ModelRequest::default() };
    match step(&runner, &limited).await.0 {
        Err(RunnerError::Http { status: 429, body, .. }) => assert!(body.contains("Rate limited")),
        other => panic!("expected HTTP 429, got {other:?}"),
    }
    let cut = ModelRequest { messages: vec![Message::user("cut")], ..ModelRequest::default() };
    match step(&runner, &cut).await.0 {
        Err(error @ RunnerError::MalformedStream { .. }) => assert_eq!(error.kind(), CallErrorKind::MalformedStream),
        other => panic!("expected a broken stream, got {other:?}"),
    }

    peer.post("/__aimock/chaos", json!({ "malformedRate": 1 })).await;
    match step(&runner, &hello()).await.0 {
        Err(RunnerError::MalformedStream { .. }) => {}
        other => panic!("expected a malformed stream, got {other:?}"),
    }
}

#[tokio::test]
async fn llmock_streams_and_every_fault_is_a_clear_error() {
    let peer = llmock();
    let mut agent = http_agent("a", format!("{}/v1", peer.base), "m");
    agent.timeout_secs = Some(1);
    let runner = LocalRunner::new(&agent).unwrap();

    let (reply, streamed) = step(&runner, &hello()).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Mock response from m.");
    assert_eq!(streamed, reply.text);
    assert!(reply.usage.unwrap().total_tokens > 0, "usage read although every other chunk says usage: null");

    let faults: Vec<(Value, CallErrorKind, &str)> = vec![
        (
            json!({ "type": "stream_fault", "kind": "disconnect", "after_chunks": 2 }),
            CallErrorKind::MalformedStream,
            "stream broke",
        ),
        (
            json!({ "type": "stream_fault", "kind": "truncate", "after_chunks": 2 }),
            CallErrorKind::MalformedStream,
            "ended before",
        ),
        (
            json!({ "type": "stream_fault", "kind": "malformed", "after_chunks": 2 }),
            CallErrorKind::MalformedStream,
            "not valid JSON",
        ),
        (
            json!({ "type": "stream_fault", "kind": "stall", "after_chunks": 2, "stall_seconds": 3 }),
            CallErrorKind::Timeout,
            "within 1 s",
        ),
    ];
    for (behaviour, kind, needle) in faults {
        peer.post("/_llmock/reset", json!({})).await;
        peer.post("/_llmock/scenario", json!({ "behaviors": [behaviour.clone()] })).await;
        match step(&runner, &hello()).await.0 {
            Err(error) => {
                assert_eq!(error.kind(), kind, "{behaviour}: {error}");
                assert!(error.to_string().contains(needle), "{behaviour}: {error}");
            }
            Ok(reply) => panic!("{behaviour}: accepted a faulty stream as {reply:?}"),
        }
    }

    // A 429 is retried as its Retry-After says, said as progress, and the next
    // answer is the step's.
    let mut patient = http_agent("a", format!("{}/v1", peer.base), "m");
    patient.timeout_secs = Some(10);
    let patient = LocalRunner::new(&patient).unwrap();
    peer.post("/_llmock/reset", json!({})).await;
    peer.post("/_llmock/scenario", json!({ "behaviors": [{ "type": "fail", "status": 429, "retry_after": 1 }] })).await;
    let request = hello();
    let mut progress = Vec::new();
    let reply = patient
        .stream(&request, &mut |delta| {
            if let ModelDelta::Progress { message, .. } = delta {
                progress.push(message);
            }
        })
        .await;
    assert_eq!(reply.unwrap().text, "Mock response from m.");
    assert_eq!(progress, vec!["rate limited (HTTP 429), retrying in 1 s (1 of 3)"]);

    peer.post("/_llmock/reset", json!({})).await;
    peer.post(
        "/_llmock/scenario",
        json!({ "behaviors": [{ "type": "reply", "tool_calls": [
            { "name": "get_weather", "arguments": { "city": "Paris" } },
            { "name": "get_time", "arguments": { "tz": "CET" } } ] }] }),
    )
    .await;
    let reply = step(&runner, &hello()).await.0.unwrap();
    let names: Vec<&str> = reply.tool_calls.iter().map(|call| call.function.name.as_str()).collect();
    assert_eq!(names, vec!["get_weather", "get_time"]);
    let arguments: Value = serde_json::from_str(&reply.tool_calls[1].function.arguments).unwrap();
    assert_eq!(arguments, json!({ "tz": "CET" }));
}

/// Each llmock fault injected into a tool-agent's stream, in a real turn: the child
/// ends with its structured error (and what it streamed before the fault, as the
/// partial result), the parent's model receives it fenced, and the turn completes.
#[tokio::test]
async fn every_llmock_fault_in_a_child_is_a_structured_error_and_the_turn_completes() {
    let peer = llmock();
    let mut child = http_agent("flaky", format!("{}/v1", peer.base), "m");
    child.timeout_secs = Some(5);
    child.idle_timeout_secs = Some(1);
    let faults = [
        (json!({ "type": "stream_fault", "kind": "disconnect", "after_chunks": 2 }), CallErrorKind::MalformedStream),
        (json!({ "type": "stream_fault", "kind": "truncate", "after_chunks": 2 }), CallErrorKind::MalformedStream),
        (json!({ "type": "stream_fault", "kind": "malformed", "after_chunks": 2 }), CallErrorKind::MalformedStream),
        (
            json!({ "type": "stream_fault", "kind": "stall", "after_chunks": 2, "stall_seconds": 4 }),
            CallErrorKind::Timeout,
        ),
        (json!({ "type": "fail", "status": 500 }), CallErrorKind::Http),
    ];
    for (behaviour, kind) in faults {
        peer.post("/_llmock/reset", json!({})).await;
        peer.post("/_llmock/scenario", json!({ "behaviors": [behaviour.clone()] })).await;
        let mut boss = AgentConfig::new("boss", Provider::Demo);
        boss.model = Some("scripted".into());
        let config = Config {
            agents: vec![boss, child.clone()],
            agent_tools: vec![switchboard_core::AgentToolEntry::new("flaky", "Flaky.")],
            ..Config::default()
        };
        let dispatcher = Dispatcher::new(config);
        let boss_runner = crate::support::Scripted::new(vec![
            crate::support::Step::Call(vec![crate::support::call("agent_flaky", "go")]),
            crate::support::Step::Say("carried on"),
        ]);
        dispatcher.runners().insert("boss", boss_runner.clone());
        let recorder = Recorder::default();
        let request = TurnRequest { agent: Some("boss".into()), message: "hi".into(), ..Default::default() };
        let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
        assert_eq!((outcome.status, outcome.text.as_str()), (CallStatus::Ok, "carried on"), "{behaviour}");
        let events = recorder.take();
        assert_stream_invariants(&events);
        let finished = events
            .iter()
            .find_map(|event| match &event.kind {
                EventKind::CallFinished { status, error, .. } if event.agent == "flaky" => {
                    Some((*status, error.clone()))
                }
                _ => None,
            })
            .unwrap();
        assert_eq!((finished.0, finished.1.map(|error| error.kind)), (CallStatus::Error, Some(kind)), "{behaviour}");
        let requests = boss_runner.requests.lock().unwrap();
        let delivered = requests[1]
            .messages
            .iter()
            .find_map(|message| match message {
                Message::Tool { content, .. } => Some(content.clone()),
                _ => None,
            })
            .unwrap();
        assert!(delivered.contains(&format!("\"kind\":\"{}\"", kind.as_str())), "{behaviour}: {delivered}");
        // Two chunks streamed before each stream fault: they come back as the partial result.
        let partial = delivered.contains("\"partial_result\":\"");
        assert_eq!(partial, kind != CallErrorKind::Http, "{behaviour}: {delivered}");
    }
}

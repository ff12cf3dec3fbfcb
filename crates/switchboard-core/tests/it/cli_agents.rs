//! The real command-line agents, offline against aimock: aider 0.86 applies a diff
//! edit in a temporary working directory and smolagents 1.26 answers through its
//! final_answer tool, both delegated to by an HTTP primary in one turn. Their output
//! streams live; the answers come back without banners and logs; their token lines
//! become the calls' usage, and the parent's total includes it.

use std::path::PathBuf;

use serde_json::json;
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallStatus, Config, Dispatcher, EventKind, Provider, TurnControl, TurnRequest, Usage,
};

use crate::dispatch_cases::assert_stream_invariants;
use crate::peers::{aimock, http_agent, repository_root};
use crate::support::Recorder;

/// A program of a project-local virtual environment that `make setup` installs.
fn installed(venv: &str, program: &str) -> PathBuf {
    let path = repository_root().join(venv).join("bin").join(program);
    assert!(path.exists(), "{} is missing; run `make setup` to install the CLI agents", path.display());
    path
}

#[tokio::test]
async fn a_primary_delegates_to_aider_and_smolagents_in_one_turn() {
    let aider = installed(".venv-aider", "aider");
    let smolagent = installed(".venv-smolagents", "smolagent");
    let peer = aimock(json!({ "fixtures": [
        { "match": { "model": "primary-m", "hasToolResult": false },
          "response": { "toolCalls": [
            { "id": "call_1", "name": "agent_coder", "arguments": { "request": "Say hello to the world in hello.py" } },
            { "id": "call_2", "name": "agent_smol", "arguments": { "request": "What is six times seven?" } } ] } },
        { "match": { "model": "primary-m", "hasToolResult": true }, "response": { "content": "Both came back." } },
        { "match": { "model": "coder-m" }, "response": { "content":
            "I will change the greeting.\n\nhello.py\n```python\n<<<<<<< SEARCH\nprint(\"hello\")\n=======\nprint(\"hello, world\")\n>>>>>>> REPLACE\n```\n\nThe greeting now says hello to the world." } },
        { "match": { "model": "smol-m" }, "response": { "toolCalls": [
            { "id": "call_f", "name": "final_answer", "arguments": { "answer": "The answer is 42." } } ] } }
    ]}));
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.py"), "print(\"hello\")\n").unwrap();
    let home_env = || [("HOME".to_string(), home.path().display().to_string())].into_iter().collect();

    let mut coder = AgentConfig::new("coder", Provider::AiderCli);
    coder.command = Some(aider.display().to_string());
    coder.model = Some("coder-m".into());
    coder.url = Some(format!("{}/v1", peer.base));
    coder.cwd = Some(work.path().display().to_string());
    coder.env = home_env();
    coder.args =
        ["--no-git", "--edit-format", "diff", "--map-tokens", "0", "--stream", "hello.py"].map(String::from).to_vec();
    coder.timeout_secs = Some(120);
    let mut smol = AgentConfig::new("smol", Provider::Smolagents);
    smol.command = Some(smolagent.display().to_string());
    smol.model = Some("smol-m".into());
    smol.url = Some(format!("{}/v1", peer.base));
    smol.env = home_env();
    smol.timeout_secs = Some(120);
    let mut config = Config {
        agents: vec![http_agent("primary", peer.base.clone(), "primary-m"), coder, smol],
        agent_tools: vec![AgentToolEntry::new("coder", "Edits code."), AgentToolEntry::new("smol", "Computes.")],
        ..Config::default()
    };
    config.primary = Some("primary".into());
    let dispatcher = Dispatcher::new(config);
    let recorder = Recorder::default();
    let request = TurnRequest { message: "Fix the greeting and multiply.".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    let events = recorder.take();
    assert_stream_invariants(&events);
    assert_eq!((outcome.status, outcome.text.as_str()), (CallStatus::Ok, "Both came back."), "{:?}", outcome.error);

    let finished = |agent: &str| {
        events
            .iter()
            .find_map(|event| match &event.kind {
                EventKind::CallFinished { status, result, usage, error, .. } if event.agent == agent => {
                    Some((*status, result.clone().unwrap_or_default(), *usage, error.clone()))
                }
                _ => None,
            })
            .unwrap()
    };
    let (status, answer, coder_usage, error) = finished("coder");
    assert_eq!(status, CallStatus::Ok, "{error:?}");
    assert!(answer.starts_with("I will change the greeting."), "the banner is gone: {answer}");
    assert!(answer.contains("Applied edit to hello.py") && !answer.contains("Aider v"), "{answer}");
    assert!(!answer.contains("Tokens:"), "the token line is usage, not answer: {answer}");
    assert_eq!(std::fs::read_to_string(work.path().join("hello.py")).unwrap(), "print(\"hello, world\")\n");
    let coder_usage = coder_usage.expect("aider's token line read as usage");
    assert!(coder_usage.input_tokens > 100 && coder_usage.output_tokens > 0, "{coder_usage:?}");

    let (status, answer, smol_usage, error) = finished("smol");
    assert_eq!((status, answer.as_str()), (CallStatus::Ok, "The answer is 42."), "{error:?}");
    let smol_usage = smol_usage.expect("smolagents' token total read as usage");
    assert!(smol_usage.input_tokens > 100, "{smol_usage:?}");

    // Live: text of the coder streamed before it finished.
    let coder_finished_at = events
        .iter()
        .position(|event| event.agent == "coder" && matches!(event.kind, EventKind::CallFinished { .. }))
        .unwrap();
    assert!(events[..coder_finished_at]
        .iter()
        .any(|event| event.agent == "coder" && matches!(event.kind, EventKind::TextDelta { .. })));
    let root_total = outcome.usage_total.unwrap();
    let mut children = Usage::default();
    children.add(&coder_usage);
    children.add(&smol_usage);
    assert!(root_total.total_tokens > children.total_tokens, "the parent's total includes the CLI agents' usage");
}

//! aider and smolagents, for real, as their users run them, offline against
//! aimock: aider 0.86 with its own defaults (no `--no-git`: it makes a git
//! repository and commits; an unknown model, so the "whole" edit format; its
//! linter on, its price list unreachable), and inside a repository with
//! auto-commits off and a failing test command; smolagents 1.26 with its own
//! default agent, which writes code. An HTTP primary delegates to both in one
//! turn. The answers are the models' replies, never the programs' logs; their
//! token lines become the calls' usage, the parent's total includes it, their
//! output streams live, and a smolagents run that hits its step limit fails with
//! its last step's error.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use switchboard_core::config::Autonomy;
use switchboard_core::contract::{Message, ModelDelta, ModelRequest};
use switchboard_core::runner::{build, Registry};
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallStatus, Config, Dispatcher, EventKind, Provider, TurnControl, TurnRequest, Usage,
};

use crate::support::assert_stream_invariants;
use crate::support::peer::{aimock, http_agent, repository_root};
use crate::support::Recorder;

/// A program of a project-local virtual environment that `make setup` installs.
fn installed(venv: &str, program: &str) -> PathBuf {
    let path = repository_root().join(venv).join("bin").join(program);
    assert!(path.exists(), "{} is missing; run `make setup` to install the CLI agents", path.display());
    path
}

/// aider's model: the commit message it asks for, a reply that fails its linter
/// ("whole" format), the fix it then asks for, and the same for the other cases.
fn aider_fixtures() -> Vec<serde_json::Value> {
    let whole = |text: &str, code: &str| format!("{text}\n\nhello.py\n```python\n{code}\n```\n");
    vec![
        json!({ "match": { "userMessage": "# Diffs:" }, "response": { "content": "feat: greet the world" } }),
        json!({ "match": { "model": "coder-m", "userMessage": "Say hello to the world" },
                "response": { "content": whole("I will change the greeting.", "print(greeting_undefined)") } }),
        json!({ "match": { "model": "coder-m" },
                "response": { "content": whole("I fixed the undefined name.", "print(\"hello, world\")") } }),
        json!({ "match": { "model": "tester-m" },
                "response": { "content": whole("The greeting now says hello to the world.", "print(\"hello, world\")") } }),
    ]
}

fn aider_agent(name: &str, model: &str, peer_base: &str, work: &Path, home: &Path) -> AgentConfig {
    let mut agent = AgentConfig::new(name, Provider::AiderCli);
    agent.command = Some(installed(".venv-aider", "aider").display().to_string());
    agent.model = Some(model.into());
    agent.url = Some(format!("{peer_base}/v1"));
    agent.cwd = Some(work.display().to_string());
    agent.env = [("HOME".to_string(), home.display().to_string())].into_iter().collect();
    agent.args = vec!["hello.py".into()];
    agent.timeout_secs = Some(120);
    // These cases let aider edit; the default, `read_only`, has its own case.
    agent.autonomy = Some(Autonomy::Edit);
    agent
}

fn git(folder: &Path, arguments: &[&str]) -> String {
    let output = Command::new("git").args(arguments).current_dir(folder).output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn a_primary_delegates_to_aider_and_smolagents_as_their_users_run_them() {
    let smolagent = installed(".venv-smolagents", "smolagent");
    let mut fixtures = vec![
        json!({ "match": { "model": "primary-m", "hasToolResult": false },
          "response": { "toolCalls": [
            { "id": "call_1", "name": "agent_coder", "arguments": { "request": "Say hello to the world in hello.py" } },
            { "id": "call_2", "name": "agent_smol", "arguments": { "request": "What is six times seven?" } } ] } }),
        json!({ "match": { "model": "primary-m", "hasToolResult": true }, "response": { "content": "Both came back." } }),
        json!({ "match": { "model": "smol-m" }, "response": { "content":
            "Thought: I will compute the product with Python and return it.\n<code>\nfinal_answer(6*7)\n</code>" } }),
        json!({ "match": { "model": "stuck-m" }, "response": { "content":
            "I think the answer is forty-two, but I will not write any code." } }),
    ];
    fixtures.extend(aider_fixtures());
    let peer = aimock(json!({ "fixtures": fixtures }));
    // A folder that is not a repository, and a HOME without a git identity.
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.py"), "print(\"hello\")\n").unwrap();
    let coder = aider_agent("coder", "coder-m", &peer.base, work.path(), home.path());
    let mut smol = AgentConfig::new("smol", Provider::Smolagents);
    smol.command = Some(smolagent.display().to_string());
    smol.model = Some("smol-m".into());
    smol.url = Some(format!("{}/v1", peer.base));
    smol.env = [("HOME".to_string(), home.path().display().to_string())].into_iter().collect();
    smol.timeout_secs = Some(120);
    let mut config = Config {
        agents: vec![http_agent("primary", peer.base.clone(), "primary-m"), coder, smol.clone()],
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
    assert_eq!(
        answer,
        "I will change the greeting.\n\nhello.py\n```python\nprint(greeting_undefined)\n```\n\n\
         I fixed the undefined name.\n\nhello.py\n```python\nprint(\"hello, world\")\n```",
        "the model's two replies (the edit, then the lint fix), nothing of aider's log"
    );
    assert_eq!(std::fs::read_to_string(work.path().join("hello.py")).unwrap(), "print(\"hello, world\")\n");
    assert!(
        git(work.path(), &["log", "--oneline"]).contains("feat: greet the world"),
        "aider committed, as by default"
    );
    let coder_usage = coder_usage.expect("aider's token lines read as usage");
    assert!(coder_usage.input_tokens > 1000 && coder_usage.output_tokens > 0, "two model calls: {coder_usage:?}");
    // Its log (the repository it made, its commits, the linter) went by as progress.
    let progress: Vec<&str> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::ToolProgress { message, .. } if event.agent == "coder" => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert!(progress.iter().any(|line| line.starts_with("Git repository created")), "{progress:?}");
    assert!(progress.iter().any(|line| line.starts_with("Commit ")), "{progress:?}");

    let (status, answer, smol_usage, error) = finished("smol");
    assert_eq!((status, answer.as_str()), (CallStatus::Ok, "42"), "{error:?}");
    let smol_usage = smol_usage.expect("smolagents' token total read as usage");
    assert!(smol_usage.input_tokens > 100, "{smol_usage:?}");
    let smol_finished_at = events
        .iter()
        .position(|event| event.agent == "smol" && matches!(event.kind, EventKind::CallFinished { .. }))
        .unwrap();
    assert!(
        events[..smol_finished_at]
            .iter()
            .any(|event| event.agent == "smol" && matches!(event.kind, EventKind::TextDelta { .. })),
        "smolagents' output streamed live"
    );
    let root_total = outcome.usage_total.unwrap();
    let mut children = Usage::default();
    children.add(&coder_usage);
    children.add(&smol_usage);
    assert!(root_total.total_tokens > children.total_tokens, "the parent's total includes the CLI agents' usage");

    // smolagents that never writes code gives up at its step limit, and says why.
    let mut stuck = smol;
    stuck.model = Some("stuck-m".into());
    let error = run_alone(&stuck).await.expect_err("no answer is a failure, though smolagents exits 0");
    assert!(error.contains("step limit") && error.contains("tokens so far"), "{error}");
    assert!(error.contains("Error in code parsing"), "its last step's error: {error}");
    assert!(!error.contains("╭"), "not the boxed log: {error}");
}

#[tokio::test]
async fn aider_answers_with_its_reply_in_a_repository_without_auto_commits_and_without_git() {
    let peer = aimock(json!({ "fixtures": aider_fixtures() }));
    let home = tempfile::tempdir().unwrap();
    // A repository of the user's, auto-commits off, a test command that fails.
    let repository = tempfile::tempdir().unwrap();
    std::fs::write(repository.path().join("hello.py"), "print(\"hello\")\n").unwrap();
    for arguments in [
        &["init", "-q"][..],
        &["-c", "user.name=U", "-c", "user.email=u@example.com", "add", "hello.py"],
        &["-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-qm", "start"],
    ] {
        git(repository.path(), arguments);
    }
    let mut in_repository = aider_agent("coder", "tester-m", &peer.base, repository.path(), home.path());
    in_repository.args =
        ["--no-auto-commits", "--auto-test", "--test-cmd", "false", "hello.py"].map(String::from).to_vec();
    let answer = run_alone(&in_repository).await.unwrap();
    assert_eq!(
        answer, "The greeting now says hello to the world.\n\nhello.py\n```python\nprint(\"hello, world\")\n```",
        "the reply once, though aider sent it again for each failed test run"
    );
    assert_eq!(git(repository.path(), &["log", "--oneline"]).lines().count(), 1, "no commit made");

    // Without git, in the diff edit format, streamed.
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("hello.py"), "print(\"hello\")\n").unwrap();
    let mut no_git = aider_agent("coder", "tester-m", &peer.base, plain.path(), home.path());
    no_git.args = ["--no-git", "hello.py"].map(String::from).to_vec();
    let answer = run_alone(&no_git).await.unwrap();
    assert!(answer.starts_with("The greeting now says hello to the world."), "{answer}");
    assert_eq!(std::fs::read_to_string(plain.path().join("hello.py")).unwrap(), "print(\"hello, world\")\n");
    assert!(!plain.path().join(".git").exists());
}

/// A model's request that aider would read as its own command (`!CMD` and `/run CMD`
/// run a shell command unasked) reaches aider's model as text, and runs nothing.
#[tokio::test]
async fn a_request_that_reads_as_an_aider_command_reaches_its_model_as_text() {
    let peer = aimock(json!({ "fixtures": aider_fixtures() }));
    let home = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("hello.py"), "print(\"hello\")\n").unwrap();
    let mut coder = aider_agent("coder", "tester-m", &peer.base, plain.path(), home.path());
    coder.args = ["--no-git", "hello.py"].map(String::from).to_vec();
    for (request, trace) in [("!touch ran-bang", "ran-bang"), ("/run touch ran-run", "ran-run")] {
        let answer = ask_alone(&coder, request).await.unwrap();
        assert!(answer.starts_with("The greeting now says hello"), "{request:?} went to the model: {answer}");
        assert!(!plain.path().join(trace).exists(), "{request:?} ran as a shell command");
    }
}

/// aider at the default autonomy, `read_only`, answers and writes nothing: no
/// edit, no repository, no `.gitignore`; and at no level below `full` does a URL
/// in the request make it fetch that address (a loopback listener that counts).
#[tokio::test]
async fn aider_does_only_what_its_autonomy_allows() {
    let peer = aimock(json!({ "fixtures": aider_fixtures() }));
    let home = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("hello.py"), "print(\"hello\")\n").unwrap();
    let mut reader = aider_agent("reader", "tester-m", &peer.base, plain.path(), home.path());
    reader.autonomy = None;
    let answer = run_alone(&reader).await.unwrap();
    assert!(answer.starts_with("The greeting now says hello to the world."), "{answer}");
    assert_eq!(std::fs::read_to_string(plain.path().join("hello.py")).unwrap(), "print(\"hello\")\n", "no edit");
    let left: Vec<String> = std::fs::read_dir(plain.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "hello.py" && !name.starts_with(".aider"))
        .collect();
    assert!(left.is_empty(), "read_only left {left:?} (a repository, a .gitignore?)");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    for autonomy in [None, Some(Autonomy::Edit)] {
        let mut agent = aider_agent("coder", "tester-m", &peer.base, plain.path(), home.path());
        agent.autonomy = autonomy;
        agent.args = ["--no-git", "hello.py"].map(String::from).to_vec();
        let request = format!("Say hello to the world; the wording is at http://{address}/notes.txt");
        let answer = ask_alone(&agent, &request).await.unwrap();
        assert!(answer.starts_with("The greeting now says hello"), "{answer}");
        assert!(listener.accept().is_err(), "aider at {autonomy:?} fetched the request's URL");
    }
}

/// One run of `agent` alone: its answer, or its error message.
async fn run_alone(agent: &AgentConfig) -> Result<String, String> {
    ask_alone(agent, "Say hello to the world in hello.py").await
}

async fn ask_alone(agent: &AgentConfig, request: &str) -> Result<String, String> {
    let runner = build(agent, &Registry::new()).map_err(|error| error.to_string())?;
    let request = ModelRequest { messages: vec![Message::user(request)], ..ModelRequest::default() };
    let mut on_delta = |_: ModelDelta| {};
    runner.stream(&request, &mut on_delta).await.map(|reply| reply.text).map_err(|error| error.to_string())
}

//! The agent CLIs users bring, for real, offline against aimock on loopback: Claude
//! Code, Codex, Gemini CLI and Qwen Code from `tests/peers` (npm, pinned), each
//! with a temporary HOME holding the settings files its users keep (telemetry
//! off, the API it is pointed at), configured with only the fields HTTP agents
//! have. In each case an HTTP primary delegates to the program in one turn: the
//! answer, usage and the parent's total come back, its output streams live, the
//! program's own error message is the call's error, and no process is left. Each
//! program also runs once under `strace -f -e trace=connect`: only loopback (and
//! the local name-service socket) is reached.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_core::contract::{Message, ModelDelta, ModelRequest};
use switchboard_core::runner::{build, Registry};
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallStatus, Config, Dispatcher, EventKind, Provider, TurnControl, TurnRequest,
};

use crate::support::assert_stream_invariants;
use crate::support::peer::{aimock, http_agent, repository_root, Peer};
use crate::support::world::{program_of, World};
use crate::support::Recorder;

/// The primary on aimock calls `tool` once with `request`, then says `summary`;
/// `agent_fixtures` answer the agent's own model.
fn delegating(tool: &str, request: &str, summary: &str, agent_fixtures: Vec<Value>) -> Value {
    let mut fixtures = vec![
        json!({ "match": { "model": "primary-m", "hasToolResult": false },
                "response": { "toolCalls": [{ "id": "call_1", "name": tool, "arguments": { "request": request } }] } }),
        json!({ "match": { "model": "primary-m", "hasToolResult": true }, "response": { "content": summary } }),
    ];
    fixtures.extend(agent_fixtures);
    json!({ "fixtures": fixtures })
}

/// What one delegation to a real agent CLI gave.
struct Delegated {
    status: CallStatus,
    answer: String,
    usage: switchboard_core::Usage,
    cost: Option<f64>,
    streamed_before_finish: bool,
    root_total: u64,
}

/// A primary on `peer` delegates to `agent` in one turn.
async fn delegate(peer: &Peer, agent: AgentConfig) -> Delegated {
    let name = agent.name.clone();
    let mut config = Config {
        agents: vec![http_agent("primary", peer.base.clone(), "primary-m"), agent],
        agent_tools: vec![AgentToolEntry::new(&name, "An agent CLI.")],
        ..Config::default()
    };
    config.primary = Some("primary".into());
    let recorder = Recorder::default();
    let request = TurnRequest { message: "Ask the agent.".into(), ..Default::default() };
    let outcome = Dispatcher::new(config).run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    let events = recorder.take();
    assert_stream_invariants(&events);
    assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.error);
    let finished_at = events
        .iter()
        .position(|event| event.agent == name && matches!(event.kind, EventKind::CallFinished { .. }))
        .expect("the agent's call finished");
    let EventKind::CallFinished { status, result, usage, cost, error, .. } = &events[finished_at].kind else {
        unreachable!()
    };
    assert_eq!(*status, CallStatus::Ok, "{error:?}");
    Delegated {
        status: *status,
        answer: result.clone().unwrap_or_default(),
        usage: usage.expect("the program's usage read"),
        cost: *cost,
        streamed_before_finish: events[..finished_at]
            .iter()
            .any(|event| event.agent == name && matches!(event.kind, EventKind::TextDelta { .. })),
        root_total: outcome.usage_total.unwrap().total_tokens,
    }
}

/// One run of `agent` alone, for its failures: the error message, or the answer.
async fn run_alone(agent: &AgentConfig) -> Result<String, String> {
    let runner = build(agent, &Registry::new()).map_err(|error| error.to_string())?;
    let request = ModelRequest { messages: vec![Message::user("Please answer.")], ..ModelRequest::default() };
    let mut on_delta = |_: ModelDelta| {};
    runner.stream(&request, &mut on_delta).await.map(|reply| reply.text).map_err(|error| error.to_string())
}

/// The reply of an agent's model with usage aimock reports.
fn answer_fixture(model: &str, content: &str) -> Value {
    json!({ "match": { "model": model },
            "response": { "content": content, "usage": { "input_tokens": 1000, "output_tokens": 500 } } })
}

fn error_fixture(model: &str, status: u16, message: &str) -> Value {
    json!({ "match": { "model": model },
            "response": { "error": { "message": message, "type": "invalid_request_error" }, "status": status } })
}

/// The common checks of one program: delegated to (answer, usage, parent's total,
/// live text), failing on a 400 with the program's own message, nothing left.
async fn check_program(provider: Provider, extra_fixtures: Vec<Value>) -> (World, Peer) {
    let name = program_of(provider);
    let mut fixtures = vec![
        answer_fixture("agent-m", &format!("Hello from {name}, offline.")),
        error_fixture("broken-m", 400, "Bad request from the fixture"),
    ];
    fixtures.extend(extra_fixtures);
    let peer = aimock(delegating(&format!("agent_{name}"), "Say hello.", "It said hello.", fixtures));
    let world = World::new(provider);
    let delegated = delegate(&peer, world.agent(name, provider, "agent-m", &peer)).await;
    assert_eq!(delegated.status, CallStatus::Ok);
    assert_eq!(delegated.answer, format!("Hello from {name}, offline."), "{provider:?}: the answer alone");
    assert!(delegated.usage.input_tokens >= 1000 && delegated.usage.output_tokens >= 500, "{:?}", delegated.usage);
    assert!(delegated.root_total > delegated.usage.total_tokens, "the parent's total includes the agent's usage");
    assert!(delegated.streamed_before_finish, "{provider:?}: its text streamed live");
    if provider == Provider::ClaudeCode {
        assert!(delegated.cost.is_some_and(|cost| cost > 0.0), "Claude Code reports a cost: {:?}", delegated.cost);
    }
    assert!(world.nothing_left(), "{provider:?} left a process running");

    let broken = world.agent(name, provider, "broken-m", &peer);
    let error = run_alone(&broken).await.expect_err("a 400 is a failure");
    assert!(error.contains("Bad request from the fixture"), "{provider:?}: the program's own words: {error}");
    assert!(!error.contains("Reading additional input"), "{provider:?}: not its banner: {error}");
    assert!(world.nothing_left(), "{provider:?} left a process running after failing");
    (world, peer)
}

#[tokio::test]
async fn claude_code_answers_fails_in_its_own_words_and_stops_at_max_turns() {
    let (world, peer) = check_program(
        Provider::ClaudeCode,
        vec![json!({ "match": { "model": "turns-m", "hasToolResult": false },
                     "response": { "toolCalls": [{ "name": "Bash", "arguments": { "command": "ls", "description": "List files" } }] } })],
    )
    .await;
    let mut limited = world.agent("claude", Provider::ClaudeCode, "turns-m", &peer);
    limited.args = vec!["--max-turns".into(), "1".into()];
    let error = run_alone(&limited).await.expect_err("a max-turns stop is a failure");
    assert!(error.contains("Reached maximum number of turns (1)"), "{error}");
    assert!(world.nothing_left());
}

#[tokio::test]
async fn codex_answers_and_fails_in_its_own_words() {
    check_program(Provider::Codex, vec![]).await;
}

#[tokio::test]
async fn gemini_cli_answers_and_fails_in_its_own_words() {
    check_program(Provider::GeminiCli, vec![]).await;
}

#[tokio::test]
async fn qwen_code_answers_and_fails_in_its_own_words() {
    check_program(Provider::QwenCode, vec![]).await;
}

/// The addresses of `connect` calls in an strace log that are neither loopback
/// nor a local socket.
fn outside_connects(trace: &str) -> Vec<String> {
    trace
        .lines()
        .filter(|line| line.contains("connect("))
        .filter(|line| {
            let local = line.contains("sa_family=AF_UNIX")
                || line.contains("inet_addr(\"127.")
                || line.contains("inet_pton(AF_INET6, \"::1\"")
                || line.contains("inet_pton(AF_INET6, \"::ffff:127.");
            !local
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn only_loopback_counts_as_inside() {
    let trace = concat!(
        "12 connect(3, {sa_family=AF_UNIX, sun_path=\"/var/run/nscd/socket\"}, 110) = -1 ENOENT\n",
        "12 connect(22, {sa_family=AF_INET, sin_port=htons(18431), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0\n",
        "12 connect(3, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr(\"10.255.255.53\")}, 16) = -1\n",
    );
    assert_eq!(outside_connects(trace).len(), 1);
}

/// Each agent CLI, run by its preset as a user configured it, under strace: it
/// connects to nothing but aimock on loopback (and local sockets).
#[tokio::test]
async fn every_agent_cli_reaches_only_loopback() {
    let strace = ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .expect("strace is installed by `make setup`");
    let peer = aimock(json!({ "fixtures": [answer_fixture("agent-m", "Hello, traced.")] }));
    for provider in [Provider::ClaudeCode, Provider::Codex, Provider::GeminiCli, Provider::QwenCode] {
        let world = World::new(provider);
        let mut agent = world.agent(program_of(provider), provider, "agent-m", &peer);
        let trace = world.home.path().join("connects.trace");
        let wrapper = world.home.path().join("traced");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexec {strace} -f -qq -e trace=connect -o {} {} \"$@\"\n",
                trace.display(),
                agent.command.as_deref().unwrap()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        agent.command = Some(wrapper.display().to_string());
        assert_eq!(run_alone(&agent).await, Ok("Hello, traced.".to_string()), "{provider:?}");
        let trace = std::fs::read_to_string(&trace).unwrap();
        assert!(trace.contains("inet_addr(\"127.0.0.1\")"), "{provider:?}: the trace saw its model calls");
        assert_eq!(outside_connects(&trace), Vec::<String>::new(), "{provider:?} reached outside loopback");
        assert!(world.nothing_left());
    }
}

/// Google's A2A server (`@google/gemini-cli-a2a-server`) on a free port, its model
/// Gemini on `model`; in its own process group, ended on drop.
struct GoogleAgent {
    child: std::process::Child,
    url: String,
    _home: tempfile::TempDir,
}

impl Drop for GoogleAgent {
    fn drop(&mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

async fn google_agent(model: &Peer) -> GoogleAgent {
    use std::os::unix::process::CommandExt;
    let peers = repository_root().join("tests/peers/node_modules");
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".gemini/tmp/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(peers.join("@qwen-code/qwen-code/vendor/ripgrep/x64-linux/rg"), bin.join("rg")).unwrap();
    let settings = json!({
        "security": { "auth": { "selectedType": "gemini-api-key" } },
        "telemetry": { "enabled": false },
        "privacy": { "usageStatisticsEnabled": false },
        "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false }
    });
    std::fs::write(home.path().join(".gemini/settings.json"), settings.to_string()).unwrap();
    let workspace = home.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let port = crate::support::peer::free_port();
    let closed = format!("http://127.0.0.1:{}", crate::support::peer::free_port());
    let child = std::process::Command::new("node")
        .arg(peers.join("@google/gemini-cli-a2a-server/dist/a2a-server.mjs"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TMPDIR", home.path())
        .env("CODER_AGENT_PORT", port.to_string())
        .env("CODER_AGENT_WORKSPACE_PATH", &workspace)
        .env("GEMINI_API_KEY", "test-key")
        .env("GOOGLE_GEMINI_BASE_URL", &model.base)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("HTTPS_PROXY", &closed)
        .env("HTTP_PROXY", &closed)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("node runs Google's A2A server");
    let agent = GoogleAgent { child, url: format!("http://127.0.0.1:{port}"), _home: home };
    // It listens before its card is ready (tool discovery): wait for the card.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let card = reqwest::get(format!("{}/.well-known/agent-card.json", agent.url)).await;
        if let Ok(response) = card {
            if response.status().is_success() {
                return agent;
            }
        }
        assert!(Instant::now() < deadline, "Google's A2A server's card did not answer within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A persistent entry's second call to Google's agent continues the task its first
/// call left waiting (`input-required` after answering): the agent's model sees the
/// first exchange as history (aimock's `turnIndex` 1), not a new task.
#[tokio::test]
async fn googles_a2a_agent_continues_its_task_for_a_persistent_entry() {
    let peer = aimock(json!({ "fixtures": [
        { "match": { "model": "primary-m", "userMessage": "first", "hasToolResult": false },
          "response": { "toolCalls": [{ "id": "c1", "name": "agent_coder", "arguments": { "request": "FIRST_Q say hello" } }] } },
        { "match": { "model": "primary-m", "userMessage": "second", "hasToolResult": false },
          "response": { "toolCalls": [{ "id": "c2", "name": "agent_coder", "arguments": { "request": "SECOND_Q again" } }] } },
        { "match": { "model": "primary-m", "hasToolResult": true }, "response": { "content": "Done." } },
        { "match": { "userMessage": "FIRST_Q" }, "response": { "content": "Hello once." } },
        { "match": { "userMessage": "SECOND_Q", "turnIndex": 1 }, "response": { "content": "Continued the task." } },
        { "match": { "userMessage": "SECOND_Q" }, "response": { "content": "Started over." } }
    ]}));
    let google = google_agent(&peer).await;
    let mut coder = AgentConfig::new("coder", Provider::A2a);
    coder.url = Some(google.url.clone());
    coder.timeout_secs = Some(60);
    let mut entry = AgentToolEntry::new("coder", "Google's coding agent.");
    entry.session = Some(switchboard_core::config::SessionMode::Persistent);
    let mut config = Config {
        agents: vec![http_agent("primary", peer.base.clone(), "primary-m"), coder],
        agent_tools: vec![entry],
        ..Config::default()
    };
    config.primary = Some("primary".into());
    let dispatcher = Dispatcher::new(config);
    let session = switchboard_core::Session::default();
    let mut history = Vec::new();
    let mut answers = Vec::new();
    for message in ["first question", "second question"] {
        let recorder = Recorder::default();
        let control = TurnControl::new(switchboard_core::ApprovalPolicy::ApproveAll, session.clone());
        let request = TurnRequest { message: message.into(), history: history.clone(), ..Default::default() };
        let outcome = dispatcher.run_turn(request, recorder.sink(), control).await;
        assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.error);
        let events = recorder.take();
        let answer = events
            .iter()
            .find_map(|event| match &event.kind {
                EventKind::CallFinished { result, status, error, .. } if event.agent == "coder" => {
                    assert_eq!(*status, CallStatus::Ok, "{error:?}");
                    result.clone()
                }
                _ => None,
            })
            .unwrap();
        answers.push(answer);
        history.push(Message::user(message));
        history.push(Message::assistant(outcome.text));
    }
    assert_eq!(answers, ["Hello once.", "Continued the task."]);
}

/// Claude Code steered on its stdin: the call is sent "stop and summarise" as
/// soon as Claude Code's session starts, while its model still streams the first
/// answer (slowly: aimock's latency); the message goes to its stdin as the next
/// user message, and Claude Code answers it once its first turn ends. The call's
/// answer is that reply, its usage both turns' (from its result lines), and
/// nothing is left running. The message is sent from the event sink.
#[tokio::test]
async fn claude_code_is_steered_on_its_stdin_and_answers_the_message_after_its_turn() {
    const STEER: &str = "stop and summarise";
    let world = World::new(Provider::ClaudeCode);
    let first: String = (0..60).map(|step| format!("step {step} of the dig; ")).collect();
    let peer = aimock(delegating(
        "agent_claude",
        "Dig into the logs.",
        "It summarised.",
        vec![
            json!({ "match": { "model": "agent-m", "userMessage": STEER },
                    "response": { "content": "Summary: stopped as asked.", "usage": { "input_tokens": 1000, "output_tokens": 500 } } }),
            json!({ "match": { "model": "agent-m" }, "latency": 25,
                    "response": { "content": first, "usage": { "input_tokens": 2000, "output_tokens": 100 } } }),
        ],
    ));
    let agent = world.agent("claude", Provider::ClaudeCode, "agent-m", &peer);
    let mut config = Config {
        agents: vec![http_agent("primary", peer.base.clone(), "primary-m"), agent],
        agent_tools: vec![AgentToolEntry::new("claude", "An agent CLI.")],
        ..Config::default()
    };
    config.primary = Some("primary".into());
    let control = TurnControl::approving_all();
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let said = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (steering, recorded, answer) = (control.clone(), events.clone(), said.clone());
    let sink = std::sync::Arc::new(move |event: switchboard_core::CallEvent| {
        let waits = event.agent == "claude"
            && matches!(&event.kind, EventKind::ToolProgress { message, .. } if message.starts_with("session "));
        let call = event.call_id.clone();
        recorded.lock().unwrap().push(event);
        let mut answer = answer.lock().unwrap();
        if waits && answer.is_none() {
            *answer = Some(steering.steer_call(&call, STEER, "user"));
        }
    });
    let request = TurnRequest { message: "Ask the agent.".into(), ..Default::default() };
    let outcome = Dispatcher::new(config).run_turn(request, sink, control).await;
    let events = events.lock().unwrap().clone();
    assert_stream_invariants(&events);
    assert_eq!(*said.lock().unwrap(), Some(Ok(())), "the message was sent once its session started");
    let of_claude: Vec<&EventKind> = events.iter().filter(|event| event.agent == "claude").map(|e| &e.kind).collect();
    assert!(matches!(of_claude[0], EventKind::CallStarted { steering: switchboard_core::Steering::Stdin, .. }));
    let steered: Vec<&&EventKind> =
        of_claude.iter().filter(|kind| matches!(kind, EventKind::CallSteered { .. })).collect();
    assert_eq!(
        steered,
        [&&EventKind::CallSteered { message: STEER.into(), by: "user".into(), taken: true, why: None }]
    );
    let Some(EventKind::CallFinished { status, result, usage, .. }) = of_claude.last() else { panic!("{of_claude:?}") };
    assert_eq!((*status, result.as_deref()), (CallStatus::Ok, Some("Summary: stopped as asked.")), "{of_claude:?}");
    let usage = usage.expect("Claude Code's usage");
    assert!(usage.input_tokens >= 3000 && usage.output_tokens >= 600, "both turns counted: {usage:?}");
    assert_eq!(outcome.text, "It summarised.");
    assert!(world.nothing_left(), "Claude Code left a process running");
}

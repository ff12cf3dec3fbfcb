//! Subprocess agents as an attacker would try them: a request that looks like an
//! option (against a real argparse CLI), the app's secrets in the environment, a
//! working directory, and processes that outlive their call (a detached
//! grandchild, one holding the pipes open, one that ignores SIGTERM).

use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard_core::config::RequestVia;
use switchboard_core::contract::{Message, ModelReply, ModelRequest, Runner, RunnerError};
use switchboard_core::runner::cache::RunnerCache;
use switchboard_core::runner::cli::subprocess::SubprocessRunner;
use switchboard_core::runner::registry::{Registry, GRACE};
use switchboard_core::{AgentConfig, Provider};

/// An argparse CLI that says what it parsed.
const ARGPARSE: &str = r#"
import argparse, sys
parser = argparse.ArgumentParser()
parser.add_argument("request", nargs="?")
parser.add_argument("--message")
parser.add_argument("--danger", action="store_true")
parsed = parser.parse_args()
stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
print(f"danger={parsed.danger} request={parsed.request!r} message={parsed.message!r} stdin={stdin!r}")
"#;

fn agent(command: &str, args: &[&str]) -> AgentConfig {
    let mut agent = AgentConfig::new("cli", Provider::Subprocess);
    agent.command = Some(command.into());
    agent.args = args.iter().map(|argument| argument.to_string()).collect();
    agent.timeout_secs = Some(20);
    agent
}

async fn ask(agent: &AgentConfig, request: &str) -> Result<ModelReply, RunnerError> {
    ask_in(&Registry::new(), agent, request).await
}

/// `ask`, the agent's process group kept in `registry`.
async fn ask_in(registry: &Arc<Registry>, agent: &AgentConfig, request: &str) -> Result<ModelReply, RunnerError> {
    let runner = SubprocessRunner::new(agent, registry.clone()).unwrap();
    let request = ModelRequest { messages: vec![Message::user(request)], ..ModelRequest::default() };
    runner.stream(&request, &mut |_| {}).await
}

#[tokio::test]
async fn a_request_never_becomes_an_option() {
    let appended = agent("python3", &["-c", ARGPARSE]);
    let reply = ask(&appended, "--danger").await.unwrap();
    assert_eq!(reply.text, "danger=False request='--danger' message=None stdin=''", "appended after --");

    let template = agent("python3", &["-c", ARGPARSE, "--message={request}"]);
    let reply = ask(&template, "--danger").await.unwrap();
    assert_eq!(reply.text, "danger=False request=None message='--danger' stdin=''", "inside a template argument");

    let mut stdin = agent("python3", &["-c", ARGPARSE]);
    stdin.request_via = Some(RequestVia::Stdin);
    let reply = ask(&stdin, "--danger").await.unwrap();
    assert_eq!(reply.text, "danger=False request=None message=None stdin='--danger'", "on stdin");

    let bare = agent("python3", &["-c", ARGPARSE, "{request}"]);
    assert_eq!(
        ask(&bare, "plain words").await.unwrap().text,
        "danger=False request='plain words' message=None stdin=''"
    );
    match ask(&bare, "--danger").await {
        Err(error @ RunnerError::Config(_)) => assert!(error.to_string().contains("starts with '-'"), "{error}"),
        other => panic!("a bare argument starting with '-' must be refused, got {other:?}"),
    }
}

#[tokio::test]
async fn an_agent_gets_only_the_environment_it_was_given() {
    std::env::set_var("SWITCHBOARD_PROBE_SECRET", "sk-probe-secret");
    std::env::set_var("SWITCHBOARD_PROBE_KEY", "sk-probe-key");
    let mut printer = agent("sh", &["-c", "env | sort"]);
    let plain = ask(&printer, "x").await.unwrap().text;
    assert!(plain.contains("PATH="), "the base environment is there: {plain}");
    assert!(!plain.contains("sk-probe"), "the app's secrets leaked: {plain}");

    printer.env.insert("GIVEN".into(), "${SWITCHBOARD_PROBE_SECRET}".into());
    printer.env.insert("PLAIN".into(), "value".into());
    printer.api_key_env = Some("SWITCHBOARD_PROBE_KEY".into());
    let given = ask(&printer, "x").await.unwrap().text;
    let lines: Vec<&str> = given.lines().filter(|line| line.contains("probe") || line.starts_with("PLAIN")).collect();
    assert_eq!(lines, vec!["GIVEN=sk-probe-secret", "PLAIN=value", "SWITCHBOARD_PROBE_KEY=sk-probe-key"]);

    printer.env.insert("MISSING".into(), "${SWITCHBOARD_PROBE_NOT_SET}".into());
    match ask(&printer, "x").await {
        Err(error @ RunnerError::Config(_)) => {
            assert!(error.to_string().contains("SWITCHBOARD_PROBE_NOT_SET"), "{error}")
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_agent_runs_in_its_working_directory() {
    let folder = tempfile::tempdir().unwrap();
    let mut pwd = agent("sh", &["-c", "pwd"]);
    pwd.cwd = Some(folder.path().display().to_string());
    let expected = folder.path().canonicalize().unwrap();
    assert_eq!(ask(&pwd, "x").await.unwrap().text, expected.display().to_string());
    pwd.cwd = Some("/nonexistent/folder".into());
    let error = ask(&pwd, "x").await.expect_err("a missing folder");
    assert!(error.to_string().contains("/nonexistent/folder"), "{error}");
}

/// Whether a process is still running (a zombie runs nothing).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

fn wait_gone(pid: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while running(pid) {
        assert!(Instant::now() < deadline, "process {pid} was left running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn no_process_outlives_its_call() {
    let folder = tempfile::tempdir().unwrap();
    let pid_file = folder.path().join("pid");
    let pid = || std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let cases = [
        // A detached grandchild holding stdout open, after a successful call.
        (format!("sleep 60 & echo $! > {}; echo done", pid_file.display()), true),
        // One holding stderr open, after a failure.
        (format!("sleep 60 >&2 & echo $! > {}; exit 3", pid_file.display()), false),
        // One that ignores SIGTERM: SIGKILL after the grace period.
        (format!("trap '' TERM; sleep 60 & echo $! > {}; echo done", pid_file.display()), true),
    ];
    for (script, succeeds) in cases {
        // The grandchildren sleep ten minutes: a call that waited for them would
        // hit this guard (a hang guard, not a timing assertion).
        let script = script.replace("sleep 60", "sleep 600");
        let result = tokio::time::timeout(Duration::from_secs(120), ask(&agent("sh", &["-c", &script]), "x"))
            .await
            .unwrap_or_else(|_| panic!("{script}: the call waited on the grandchild"));
        assert_eq!(result.is_ok(), succeeds, "{script}: {result:?}");
        wait_gone(&pid(), GRACE + Duration::from_secs(30));
    }
    // A shell that must exit before the grace period ends makes sure of it.
    let registry = Registry::new();
    let stubborn = agent("sh", &["-c", &format!("trap '' TERM; sleep 60 & echo $! > {}", pid_file.display())]);
    let result = ask_in(&registry, &stubborn, "x").await;
    assert!(result.is_ok());
    registry.finish_pending();
    // SIGKILL is sent before it returns; the kernel ends the process a moment later.
    wait_gone(&pid(), Duration::from_secs(30));
}

#[tokio::test]
async fn an_invalid_byte_does_not_hide_the_rest_from_the_budget_and_output_is_capped() {
    use switchboard_core::{
        CallErrorKind, CallStatus, Config, Dispatcher, EventKind, Limits, TurnControl, TurnRequest,
    };
    let mut flood = agent("sh", &["-c", r"printf '\377'; head -c 100000 /dev/zero | tr '\0' a"]);
    flood.name = "flood".into();
    let config = Config {
        agents: vec![crate::support::agent("boss"), flood],
        agent_tools: vec![switchboard_core::AgentToolEntry::new("flood", "Floods.")],
        limits: Limits { max_tokens_per_turn: Some(1_000), ..Limits::default() },
        ..Config::default()
    };
    let dispatcher = Dispatcher::new(config);
    let boss = crate::support::Scripted::new(vec![
        crate::support::Step::Call(vec![crate::support::call("agent_flood", "go")]),
        crate::support::Step::Say("done"),
    ]);
    dispatcher.runners().insert("boss", boss);
    let recorder = crate::support::Recorder::default();
    let request = TurnRequest { agent: Some("boss".into()), message: "go".into(), ..Default::default() };
    dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    let finished = recorder
        .take()
        .into_iter()
        .find_map(|event| match event.kind {
            EventKind::CallFinished { status, error, .. } if event.agent == "flood" => {
                Some((status, error.map(|error| error.kind)))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        finished,
        (CallStatus::Limited, Some(CallErrorKind::Budget)),
        "the budget saw the output past the bad byte"
    );

    let mut capped = agent("sh", &["-c", "head -c 5000 /dev/zero | tr '\\0' a"]);
    capped.max_output_bytes = Some(1_000);
    let text = ask(&capped, "x").await.unwrap().text;
    assert!(text.starts_with(&"a".repeat(1_000)) && !text.starts_with(&"a".repeat(1_001)), "{}", &text[..50]);
    assert!(
        text.ends_with("[output cut at 1000 bytes (max_output_bytes): 4000 more bytes were dropped]"),
        "{text:.60}"
    );
}

/// A stand-in for `claude -p --output-format stream-json --verbose` (no model
/// service is reachable here): the same event lines, with a pause between them.
const CLAUDE_STAND_IN: &str = r#"
echo '{"type":"system","subtype":"init","session_id":"s1"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Looking at the folder."},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}'
sleep 0.2
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"It holds two files."}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"The folder holds two files.","total_cost_usd":0.0125,"usage":{"input_tokens":40,"cache_read_input_tokens":960,"output_tokens":25}}'
"#;

#[tokio::test]
async fn a_json_lines_cli_streams_its_events_and_reports_its_usage_and_cost() {
    use switchboard_core::config::{OutputFormat, OutputRules};
    use switchboard_core::{CallStatus, Config, Dispatcher, EventKind, TurnControl, TurnRequest, Usage};
    let mut claude = agent("sh", &["-c", CLAUDE_STAND_IN]);
    claude.name = "claude".into();
    claude.output = Some(OutputRules { format: Some(OutputFormat::ClaudeStreamJson), ..OutputRules::default() });
    let config = Config {
        agents: vec![crate::support::agent("boss"), claude],
        agent_tools: vec![switchboard_core::AgentToolEntry::new("claude", "Claude Code.")],
        ..Config::default()
    };
    let dispatcher = Dispatcher::new(config);
    let boss = crate::support::Scripted::new(vec![
        crate::support::Step::Call(vec![crate::support::call("agent_claude", "what is in the folder?")]),
        crate::support::Step::Say("done"),
    ]);
    dispatcher.runners().insert("boss", boss);
    let recorder = crate::support::Recorder::default();
    let request = TurnRequest { agent: Some("boss".into()), message: "go".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    assert_eq!(outcome.status, CallStatus::Ok);
    let events: Vec<_> = recorder.take().into_iter().filter(|event| event.agent == "claude").collect();
    let shown: Vec<String> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::TextDelta { text } => Some(format!("text {text}")),
            EventKind::ToolProgress { message, .. } => Some(format!("progress {message}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            "progress session s1 started",
            "text Looking at the folder.",
            r#"progress Bash: {"command":"ls"}"#,
            "text It holds two files."
        ],
        "events, not raw JSON"
    );
    match &events.last().unwrap().kind {
        EventKind::CallFinished { status, result, usage, cost, .. } => {
            assert_eq!(*status, CallStatus::Ok);
            assert_eq!(result.as_deref(), Some("The folder holds two files."));
            assert_eq!(*usage, Some(Usage::new(1_000, 25)));
            assert_eq!(*cost, Some(0.0125), "the CLI's own cost, the agent having no prices");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(outcome.cost_total, Some(0.0125), "the cost rolls up to the turn");
}

#[tokio::test]
async fn a_cache_owns_its_groups_and_a_second_cache_in_the_process_does_not_see_them() {
    let folder = tempfile::tempdir().unwrap();
    let pid_file = folder.path().join("pid");
    let mut sleeper = agent("sh", &["-c", &format!("echo $$ > {}; sleep 600", pid_file.display())]);
    sleeper.timeout_secs = Some(600);
    let (first, second) = (Arc::new(RunnerCache::default()), RunnerCache::default());
    let runner = first.get_or_build(&sleeper).unwrap();
    let call = tokio::spawn(async move {
        let request = ModelRequest { messages: vec![Message::user("x")], ..ModelRequest::default() };
        runner.stream(&request, &mut |_| {}).await
    });
    // A readiness wait (with a guard against a hang): the agent has started.
    let guard = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&pid_file).map_or(true, |text| !text.ends_with('\n')) {
        assert!(Instant::now() < guard, "the agent never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let group: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert_eq!(first.registry().live_groups(), [group], "the cache that ran the call lists its group");
    assert!(second.registry().live_groups().is_empty(), "another cache sees nothing of it");
    // The second cache's shutdown leaves the first one's call alone.
    tokio::task::spawn_blocking(move || second.shutdown()).await.unwrap();
    assert!(!call.is_finished(), "the call still runs after another cache shut down");
    assert!(std::path::Path::new(&format!("/proc/{group}")).exists());
    // Its own cache's shutdown ends it, and the call with it.
    let owner = first.clone();
    tokio::task::spawn_blocking(move || owner.shutdown()).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), call).await.expect("the call ends").unwrap();
    assert!(ended.is_err(), "a call whose agent was ended fails: {ended:?}");
    wait_gone(&group.to_string(), Duration::from_secs(30));
    assert!(first.registry().live_groups().is_empty());
}

#[tokio::test]
async fn a_program_that_does_not_start_is_said_in_words_as_the_programs_failure() {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("not-executable.sh");
    std::fs::write(&script, "echo hi\n").unwrap();
    let mut in_missing_folder = agent("sh", &["-c", "echo hi"]);
    in_missing_folder.cwd = Some(folder.path().join("gone").display().to_string());
    let cases = [
        (
            agent("no-such-agent-cli", &[]),
            "the program \"no-such-agent-cli\" is not on PATH; install it or give its full path",
        ),
        (agent("/opt/none/agent", &[]), "the program \"/opt/none/agent\" does not exist"),
        (agent(&script.display().to_string(), &[]), "is not executable"),
        (in_missing_folder, "does not exist (the agent's `cwd`)"),
    ];
    for (agent, expected) in cases {
        let error = ask(&agent, "x").await.expect_err("it cannot start");
        assert_eq!(error.kind(), switchboard_core::CallErrorKind::Subprocess, "{error}");
        let message = error.to_string();
        assert!(message.starts_with("cannot start agent \"cli\": ") && message.contains(expected), "{message}");
        assert!(!message.contains("model server"), "{message}");
    }
}

//! One call to each kind of agent through its runner, beside the bare client doing
//! the same work in the same run (median of the rounds, printed, never asserted):
//! (a) `subprocess`: `/bin/echo` through the runner (arguments, environment,
//!     process group, capped output, redaction, group ending) against a bare
//!     tokio spawn of the same program in a process group with the same
//!     environment, its stdout and stderr read to the end;
//! (b) `mcp`: one call to a trivial tool of the Python `mcp` server
//!     (`tests/mcp/remote_server.py`'s `big`, 16 bytes) through the runner,
//!     against rmcp's own client calling the same tool of a second instance;
//! (c) `a2a`: one streamed call to the Python `a2a-sdk` agent
//!     (`tests/a2a/a2a_server.py`, "quick": one artifact, completed) through the
//!     runner, against a bare reqwest client sending the same `SendStreamingMessage`
//!     and reading its SSE to the end with the same reader;
//! (d) `switchboard mcp` as a server: rmcp's client calling a demo tool-agent of
//!     the real binary over stdio, against the same client calling the Python
//!     server's trivial tool (a bare MCP server doing less work).
//!
//! The Python peers come from `make setup` (`.venv`); a part whose peer is missing
//! says so and is skipped. Run: `make bench`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use switchboard_core::contract::{Message, ModelRequest};
use switchboard_core::runner;
use switchboard_core::{AgentConfig, Provider};
use tokio::io::AsyncReadExt;

const ROUNDS: usize = 200;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> Option<PathBuf> {
    let python = root().join(".venv/bin/python");
    python.exists().then_some(python)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn row(what: &str, ours: Duration, bare: Duration, baseline: &str) {
    let ratio = ours.as_secs_f64() / bare.as_secs_f64();
    println!("{what}: {:.0} µs, {ratio:.2}× {baseline} ({:.0} µs)", micros(ours), micros(bare));
}

/// Alternates the two (so drift on a busy machine hits both) and returns medians.
async fn compare<A, B, FA, FB>(mut ours: A, mut bare: B) -> (Duration, Duration)
where
    A: FnMut() -> FA,
    B: FnMut() -> FB,
    FA: std::future::Future<Output = ()>,
    FB: std::future::Future<Output = ()>,
{
    for _ in 0..10 {
        ours().await;
        bare().await;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let started = Instant::now();
        ours().await;
        a.push(started.elapsed());
        let started = Instant::now();
        bare().await;
        b.push(started.elapsed());
    }
    (median(a), median(b))
}

fn request(text: &str) -> ModelRequest {
    ModelRequest { messages: vec![Message::user(text)], ..ModelRequest::default() }
}

async fn subprocess() {
    let mut agent = AgentConfig::new("echo", Provider::Subprocess);
    agent.command = Some("/bin/echo".into());
    agent.args = vec!["{request}".into()];
    let echo = runner::build(&agent, &runner::Registry::new()).unwrap();
    // The environment the runner gives the program (PATH, HOME, LANG, SHELL, TERM):
    // with LANG set, the program loads its locale, which costs it ~0.2 ms; the bare
    // spawn gives it the same, so the ratio is the runner's work alone.
    let environment = switchboard_core::runner::cli::subprocess::SubprocessRunner::new(&agent, runner::Registry::new())
        .unwrap()
        .environment()
        .unwrap();
    let ask = request("hello");
    let (ours, bare) = compare(
        || async {
            let reply = echo.stream(&ask, &mut |_| {}).await.unwrap();
            assert_eq!(reply.text.trim(), "hello");
        },
        || async {
            let mut child = tokio::process::Command::new("/bin/echo")
                .arg("hello")
                .env_clear()
                .envs(environment.clone())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true)
                .spawn()
                .unwrap();
            let mut stderr = child.stderr.take().unwrap();
            let errors = tokio::spawn(async move {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text).await;
                text
            });
            let mut out = String::new();
            child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
            child.wait().await.unwrap();
            let _ = errors.await;
            assert_eq!(out.trim(), "hello");
        },
    )
    .await;
    let baseline = "a bare tokio spawn of it (its process group, the same environment, stdout and stderr read)";
    row("a `subprocess` call (/bin/echo)", ours, bare, baseline);
}

/// rmcp's client on a stdio server started from `command`.
async fn rmcp_client(command: &Path, args: &[&str], env: &[(&str, &str)]) -> RunningService<RoleClient, ()> {
    let mut child = tokio::process::Command::new(command);
    child.args(args).envs(env.iter().copied()).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
    let mut child = child.spawn().unwrap();
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    ().serve((stdout, stdin)).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, argument: &str) {
    let mut arguments = JsonObject::new();
    arguments.insert(argument.into(), Value::String("hello".into()));
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    let result = client.call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true));
}

async fn mcp(python: &Path) {
    let server = root().join("tests/mcp/remote_server.py");
    let mut agent = AgentConfig::new("remote", Provider::Mcp);
    agent.command = Some(python.display().to_string());
    agent.args = vec![server.display().to_string()];
    agent.tool = Some("big".into());
    agent.env.insert("REMOTE_BIG_BYTES".into(), "16".into());
    let remote = runner::build(&agent, &runner::Registry::new()).unwrap();
    let bare = rmcp_client(python, &[&server.display().to_string()], &[("REMOTE_BIG_BYTES", "16")]).await;
    let ask = request("hello");
    let (ours, direct) = compare(
        || async {
            let reply = remote.stream(&ask, &mut |_| {}).await.unwrap();
            assert_eq!(reply.text.len(), 16);
        },
        || call(&bare, "big", "task"),
    )
    .await;
    row(
        "an `mcp` provider call (Python `mcp` server, trivial tool)",
        ours,
        direct,
        "rmcp's client calling it directly",
    );
}

async fn a2a(python: &Path) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut server = tokio::process::Command::new(python)
        .arg(root().join("tests/a2a/a2a_server.py"))
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let card = loop {
        match client.get(format!("{base}/.well-known/agent-card.json")).send().await {
            Ok(answer) if answer.status().is_success() => break answer.json::<Value>().await.unwrap(),
            _ => {
                assert!(server.try_wait().unwrap().is_none(), "the A2A agent exited");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let endpoint = switchboard_core::runner::remote::a2a::parse_card(&card).unwrap().endpoint;
    let mut agent = AgentConfig::new("scout", Provider::A2a);
    agent.url = Some(base.clone());
    let scout = runner::build(&agent, &runner::Registry::new()).unwrap();
    let ask = request("quick");
    let (ours, bare) = compare(
        || async {
            let reply = scout.stream(&ask, &mut |_| {}).await.unwrap();
            assert_eq!(reply.text, "quick answer");
        },
        || async {
            let id = switchboard_core::dispatch::random_nonce();
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": { "message":
                { "messageId": id, "role": "ROLE_USER", "parts": [{ "text": "quick" }] } } });
            let response = client
                .post(&endpoint)
                .header("Accept", "text/event-stream")
                .header("A2A-Version", "1.0")
                .json(&body)
                .send()
                .await
                .unwrap();
            let mut events = runner::sse::SseReader::new(response.bytes_stream(), 10 * 1024 * 1024);
            let mut completed = false;
            while let Some(event) = events.next().await {
                let value: Value = serde_json::from_str(&event.unwrap().data).unwrap();
                completed |= value.to_string().contains("TASK_STATE_COMPLETED");
            }
            assert!(completed);
        },
    )
    .await;
    row(
        "an `a2a` call (Python `a2a-sdk` agent, streamed)",
        ours,
        bare,
        "a bare reqwest client, same request and SSE reader",
    );
}

async fn switchboard_mcp(python: &Path) {
    let binary = root().join("target/release/switchboard");
    let binary = if binary.exists() { binary } else { root().join("target/debug/switchboard") };
    if !binary.exists() {
        println!("switchboard mcp: skipped (build the CLI first: cargo build -p switchboard-cli)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let config = folder.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "agents": [{ "name": "helper", "provider": "demo", "model": "demo-echo" }],
                "agent_tools": [{ "agent": "helper", "description": "Echoes.", "approval": "auto" }] })
        .to_string(),
    )
    .unwrap();
    let data = folder.path().join("data");
    let ours = rmcp_client(
        &binary,
        &["--config", &config.display().to_string(), "--data-dir", &data.display().to_string(), "mcp"],
        &[],
    )
    .await;
    let server = root().join("tests/mcp/remote_server.py");
    let bare = rmcp_client(python, &[&server.display().to_string()], &[("REMOTE_BIG_BYTES", "16")]).await;
    let (mine, theirs) = compare(|| call(&ours, "agent_helper", "request"), || call(&bare, "big", "task")).await;
    let build = if binary.ends_with("release/switchboard") { "release" } else { "debug" };
    row(
        &format!("`switchboard mcp` ({build} build) answering one tool-agent call (a demo agent)"),
        mine,
        theirs,
        "the Python `mcp` server answering a trivial tool",
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        subprocess().await;
        let Some(python) = python() else {
            println!("mcp, a2a, switchboard mcp: skipped (no .venv: run `make setup`)");
            return;
        };
        mcp(&python).await;
        a2a(&python).await;
        switchboard_mcp(&python).await;
    });
}

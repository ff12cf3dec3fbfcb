//! "Test connection" for one agent, as the agent form and `switchboard agent test`
//! run it: for an HTTP agent, the server's model list and one tiny streamed request
//! (with the time to the first token and in all); for an MCP agent, its server's
//! tools; for an A2A agent, its card; for a command-line agent, where its program
//! is. Each step says in plain words what went wrong and what to check.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde::Serialize;
use specta::Type;

use super::{list_models, ModelsError};
use crate::config::{AgentConfig, Family, Provider};
use crate::contract::{Message, ModelDelta, ModelRequest, Runner, RunnerError};
use crate::runner::{self, Registry};

/// How long the tiny request may take in all.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One step of the test.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConnectionStep {
    /// What was tried ("list models", "stream a reply"…).
    pub name: String,
    pub ok: bool,
    /// What came back, or what went wrong and what to check.
    pub detail: String,
    /// How long the step took, in milliseconds.
    pub millis: u32,
}

/// The whole test.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConnectionReport {
    pub ok: bool,
    pub steps: Vec<ConnectionStep>,
    /// The server's models (HTTP agents).
    pub models: Vec<String>,
    /// The server's tools (MCP agents).
    pub tools: Vec<String>,
    /// Time to the first streamed token of the tiny request, in milliseconds.
    pub first_token_ms: Option<u32>,
    /// What a tool entry for this agent could say it does: an A2A agent's card (name,
    /// description, skills) or the MCP tool's own description. Remote text: the form
    /// shows it in a field the user edits before saving.
    pub description: Option<String>,
}

/// Tests `agent` as configured (unsaved form values included); `path` is the PATH
/// command-line agents are looked for on.
pub async fn test_connection(agent: &AgentConfig, path: Option<OsString>) -> ConnectionReport {
    test_connection_with_keys(agent, path, &crate::keys::SystemKeyring::shared()).await
}

/// `test_connection`, reading an `api_key_keyring` key from `keys`.
pub async fn test_connection_with_keys(
    agent: &AgentConfig,
    path: Option<OsString>,
    keys: &crate::keys::Keys,
) -> ConnectionReport {
    let mut report = ConnectionReport {
        ok: true,
        steps: vec![],
        models: vec![],
        tools: vec![],
        first_token_ms: None,
        description: None,
    };
    match agent.provider.family() {
        Family::HttpModel => test_http(agent, keys, &mut report).await,
        Family::Mcp => test_mcp(agent, &mut report).await,
        Family::A2a => test_a2a(agent, &mut report).await,
        Family::Demo => step(&mut report, "built-in agent", Instant::now(), Ok("needs no server".into())),
        Family::Program | Family::ClaudeSession => test_program(agent, path, &mut report),
    }
    report
}

fn step(report: &mut ConnectionReport, name: &str, started: Instant, outcome: Result<String, String>) {
    let ok = outcome.is_ok();
    report.ok &= ok;
    report.steps.push(ConnectionStep {
        name: name.into(),
        ok,
        detail: outcome.unwrap_or_else(|problem| problem),
        millis: started.elapsed().as_millis().min(u32::MAX as u128) as u32,
    });
}

async fn test_http(agent: &AgentConfig, keys: &crate::keys::Keys, report: &mut ConnectionReport) {
    let Some(url) = agent.url.as_deref().filter(|url| !url.trim().is_empty()) else {
        return step(
            report,
            "configuration",
            Instant::now(),
            Err("Give the server's URL, e.g. http://127.0.0.1:11434/v1.".into()),
        );
    };
    let key = match &agent.api_key_env {
        Some(variable) => match std::env::var(variable) {
            Ok(key) => Some(key),
            Err(_) => {
                let problem = format!("The environment variable {variable} is not set in the app's environment; set it and restart the app, or clear the API key variable for a server that needs none.");
                return step(report, "API key", Instant::now(), Err(problem));
            }
        },
        None => {
            match &agent.api_key_keyring {
                Some(entry) => match crate::keys::read(keys, entry).await {
                    Ok(Some(key)) => Some(key),
                    Ok(None) => {
                        let problem = format!("No key is stored in the system keyring for {entry:?}; enter it in the API key field and save.");
                        return step(report, "API key", Instant::now(), Err(problem));
                    }
                    Err(error) => return step(report, "API key", Instant::now(), Err(error.to_string())),
                },
                None => None,
            }
        }
    };
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap_or_default();
    let started = Instant::now();
    let base = super::openai_base(url);
    match list_models(&client, url, key.as_deref(), agent.provider).await {
        Ok(models) => {
            let detail = match &agent.model {
                Some(model) if !models.is_empty() && !models.contains(model) => {
                    let shown: Vec<&str> = models.iter().take(8).map(String::as_str).collect();
                    Err(format!("The server does not list the model {model:?}; it lists {}.", shown.join(", ")))
                }
                _ => Ok(format!("{} model(s) at {base}", models.len())),
            };
            report.models = models;
            step(report, "list models", started, detail);
        }
        Err(problem) => {
            let detail = match problem {
                ModelsError::Unreachable => format!("Nothing answers at {base}. Is the server running, and is the port right?"),
                ModelsError::Status(401 | 403) => match (&agent.api_key_env, &agent.api_key_keyring) {
                    (Some(variable), _) => format!("The server refused the key (HTTP 401/403). Check the key in {variable}."),
                    (None, Some(entry)) => format!("The server refused the key (HTTP 401/403). Check the key stored in the system keyring for {entry:?}."),
                    (None, None) => "The server asks for a key (HTTP 401/403): give one.".into(),
                },
                ModelsError::Status(404) => format!("{base}/models does not exist. Is this the server's OpenAI-compatible base URL (it usually ends in /v1)?"),
                ModelsError::Status(status) => format!("{base}/models answered HTTP {status}."),
                ModelsError::NotAList => format!("{base}/models did not answer with an OpenAI model list."),
            };
            // The request below still says whether chat completions work.
            step(report, "list models", started, Err(detail));
        }
    }
    if agent.model.as_deref().is_none_or(|model| model.trim().is_empty()) {
        // Most servers refuse a request without a model; the list above says
        // whether the server answers, and which models there are to choose from.
        return;
    }
    let built: Result<Box<dyn Runner>, _> = if agent.provider == Provider::Anthropic {
        runner::anthropic::AnthropicRunner::with_keys(agent, keys.clone()).map(|runner| Box::new(runner) as _)
    } else {
        runner::local::LocalRunner::with_keys(agent, keys.clone()).map(|runner| Box::new(runner) as _)
    };
    let runner = match built {
        Ok(runner) => runner,
        Err(error) => return step(report, "stream a reply", Instant::now(), Err(error.to_string())),
    };
    let request = ModelRequest {
        messages: vec![Message::user("Reply with the single word: ok")],
        tools: vec![],
        model: None,
        idle_timeout_secs: Some(REQUEST_TIMEOUT.as_secs()),
        context: None,
        ..ModelRequest::default()
    };
    let started = Instant::now();
    let mut first_token: Option<Duration> = None;
    let mut on_delta = |delta: ModelDelta| {
        if matches!(delta, ModelDelta::Text(_)) && first_token.is_none() {
            first_token = Some(started.elapsed());
        }
    };
    let reply = tokio::time::timeout(REQUEST_TIMEOUT, runner.stream(&request, &mut on_delta)).await;
    report.first_token_ms = first_token.map(|elapsed| elapsed.as_millis() as u32);
    let outcome = match reply {
        Err(_) => Err(format!("No complete reply within {} s.", REQUEST_TIMEOUT.as_secs())),
        Ok(Err(error)) => Err(plain(&runner::redact::error_with_key(agent, key.as_deref(), error))),
        Ok(Ok(reply)) => {
            let first = report.first_token_ms.map(|ms| format!("first token after {ms} ms, ")).unwrap_or_default();
            // What the server answered is hostile: an echoed key is taken out.
            let answered = runner::Secrets::with_key(agent, key.clone()).known(&reply.text);
            let text: String = answered.chars().take(60).collect();
            Ok(format!("{first}answered {text:?}"))
        }
    };
    step(report, "stream a reply", started, outcome);
}

/// A runner error in the words a form shows.
fn plain(error: &RunnerError) -> String {
    match error {
        RunnerError::Unreachable { url, .. } => format!("Nothing answers at {url}. Is the server running?"),
        RunnerError::Http { status: 401 | 403, .. } => "The server refused the key; check the API key variable.".into(),
        RunnerError::Http { status: 404, url, body } => {
            format!("{url} answered 404 (wrong URL or unknown model): {body}")
        }
        other => other.to_string(),
    }
}

async fn test_mcp(agent: &AgentConfig, report: &mut ConnectionReport) {
    let started = Instant::now();
    // The test's own registry: the stdio server it starts ends with the test.
    let registry = Registry::new();
    let runner = match runner::remote::mcp::McpRunner::new(agent, registry.clone()) {
        Ok(runner) => runner,
        Err(error) => return step(report, "connect", started, Err(error.to_string())),
    };
    let tools = runner.probe().await.map_err(|error| runner::redact::error_of(agent, error));
    drop(runner); // a stdio server's process group is signalled here
                  // Its SIGKILL, if it ignores SIGTERM, is waited for off the runtime's workers.
    let _ = tokio::task::spawn_blocking(move || registry.shutdown()).await;
    match tools {
        Ok(tools) => {
            report.tools = tools.iter().map(|tool| tool.name.to_string()).collect();
            let chosen = match &agent.tool {
                Some(name) => tools.iter().find(|tool| tool.name == *name),
                None if tools.len() == 1 => tools.first(),
                None => None,
            };
            report.description = chosen.and_then(|tool| tool.description.as_deref()).map(|text| clip(text.trim()));
            let outcome = match &agent.tool {
                Some(tool) if !report.tools.contains(tool) => {
                    Err(format!("The server has no tool {tool:?}; it offers {}.", report.tools.join(", ")))
                }
                None if report.tools.len() > 1 => Err(format!(
                    "The server offers {} tools; choose one: {}.",
                    report.tools.len(),
                    report.tools.join(", ")
                )),
                _ => Ok(format!("{} tool(s): {}", report.tools.len(), report.tools.join(", "))),
            };
            step(report, "list tools", started, outcome);
        }
        Err(error) => step(report, "list tools", started, Err(plain(&error))),
    }
}

async fn test_a2a(agent: &AgentConfig, report: &mut ConnectionReport) {
    let started = Instant::now();
    let card = match runner::remote::a2a::A2aRunner::new(agent, Registry::new()) {
        Ok(runner) => runner.card().await.map_err(|error| runner::redact::error_of(agent, error)),
        Err(error) => Err(error),
    };
    if let Ok(card) = &card {
        report.description = Some(clip(&card.tool_description()));
    }
    let outcome = card
        .map(|card| {
            let streams = if card.streaming { "streams" } else { "does not stream" };
            format!("{} at {} ({streams})", card.name, card.endpoint)
        })
        .map_err(|error| plain(&error));
    step(report, "read the agent card", started, outcome);
}

/// The program a command-line agent runs: its preset's (or its own) command, and
/// `claude` for a `claude-cli` agent that names none.
pub(super) fn program_of(agent: &AgentConfig) -> Option<String> {
    let default = (agent.provider == Provider::ClaudeCli).then(|| "claude".to_string());
    runner::cli::presets::invocation(agent).command.or(default)
}

fn test_program(agent: &AgentConfig, path: Option<OsString>, report: &mut ConnectionReport) {
    let started = Instant::now();
    let Some(program) = program_of(agent) else {
        return step(report, "find the program", started, Err("Give the command to run.".into()));
    };
    let outcome = runner::cli::presets::find_program(&program, &path.unwrap_or_default())
        .map(|found| format!("{program} is {}", found.display()))
        .ok_or_else(|| {
            format!("{program:?} is not on PATH (nor a file at that path). Install it or give its full path.")
        });
    step(report, "find the program", started, outcome);
}

/// A remote description, at most 1,000 characters (cut at a character boundary).
fn clip(text: &str) -> String {
    match text.char_indices().nth(1000) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

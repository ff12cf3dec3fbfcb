//! `switchboard agent add|edit|remove|test` and `switchboard roles set`: the same
//! core edits the desktop forms send (validated, conflict-checked, written
//! atomically), from flags; and the forms' connection test.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use switchboard_core::config::edit::{Edit, EntryFate};
use switchboard_core::config::{AgentConfig, Approval, Autonomy, Provider};
use switchboard_core::setup::connection::test_connection;

use crate::{load, save, terminal::printable, Failure};

/// An agent's fields as flags; on `edit`, only the flags given change.
#[derive(Args, Default)]
pub(crate) struct AgentFields {
    /// local (OpenAI-compatible HTTP), aider-cli, smolagents, claude-code, codex, gemini-cli, qwen-code,
    /// subprocess, claude-cli, demo, mcp, a2a.
    #[arg(long, value_parser = parse_provider)]
    provider: Option<Provider>,
    #[arg(long)]
    url: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// The NAME of the environment variable holding the API key (never the key).
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// local agents: the system keyring entry holding the API key (store the key
    /// with `switchboard agent key set NAME`).
    #[arg(long, value_name = "ENTRY")]
    api_key_keyring: Option<String>,
    #[arg(long)]
    command: Option<String>,
    /// One argument of the command (repeat for more; given at least once, replaces them all).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    args: Vec<String>,
    #[arg(long)]
    cwd: Option<String>,
    /// NAME=VALUE given to a command-line agent (repeat; `${NAME}` takes the app's variable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    #[arg(long, value_name = "SECS")]
    timeout_secs: Option<u64>,
    #[arg(long, value_name = "SECS")]
    idle_timeout_secs: Option<u64>,
    #[arg(long)]
    system_prompt: Option<String>,
    /// mcp agents: the server's tool.
    #[arg(long)]
    tool: Option<String>,
    /// mcp agents: the tool argument the request goes into.
    #[arg(long)]
    request_argument: Option<String>,
    /// Calls to this agent need approval (ask), run unasked (auto) or are refused
    /// (deny), where the tool entry that calls it does not say.
    #[arg(long, value_parser = parse_approval)]
    approval: Option<Approval>,
    /// Agent CLIs (claude-code, codex, gemini-cli, qwen-code): what they may do unattended:
    /// read_only (the default), edit, or full.
    #[arg(long, value_parser = parse_autonomy)]
    autonomy: Option<Autonomy>,
    /// mcp agents: the tool argument the delegate's structured context goes into.
    #[arg(long)]
    context_argument: Option<String>,
    /// mcp agents: ask the server to run each call as a task (the MCP tasks
    /// extension), polled to its end (`--unset tasks` to stop).
    #[arg(long)]
    tasks: bool,
    /// Clear an optional field (url, model, api_key_env, api_key_keyring, command, cwd, system_prompt,
    /// tool, request_argument, context_argument, tasks, approval, autonomy, timeout_secs, idle_timeout_secs, args, env).
    #[arg(long, value_name = "FIELD")]
    unset: Vec<String>,
}

fn parse_approval(text: &str) -> Result<Approval, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|_| "one of ask, auto, deny".to_string())
}

fn parse_autonomy(text: &str) -> Result<Autonomy, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|_| "one of read_only, edit, full".to_string())
}

fn parse_provider(text: &str) -> Result<Provider, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|_| {
        // The names the provider table reads, in its order.
        let names: Vec<&str> = switchboard_core::config::PROVIDERS
            .iter()
            .flat_map(|row| std::iter::once(row.wire).chain(row.aliases.iter().copied()))
            .collect();
        format!("one of {}", names.join(", "))
    })
}

impl AgentFields {
    /// Writes the given flags onto `agent`.
    fn apply(self, agent: &mut AgentConfig) -> Result<(), Failure> {
        for field in &self.unset {
            match field.as_str() {
                "url" => agent.url = None,
                "model" => agent.model = None,
                "api_key_env" => agent.api_key_env = None,
                "api_key_keyring" => agent.api_key_keyring = None,
                "command" => agent.command = None,
                "cwd" => agent.cwd = None,
                "system_prompt" => agent.system_prompt = None,
                "tool" => agent.tool = None,
                "request_argument" => agent.request_argument = None,
                "context_argument" => agent.context_argument = None,
                "tasks" => agent.tasks = None,
                "approval" => agent.approval = None,
                "autonomy" => agent.autonomy = None,
                "timeout_secs" => agent.timeout_secs = None,
                "idle_timeout_secs" => agent.idle_timeout_secs = None,
                "args" => agent.args.clear(),
                "env" => agent.env.clear(),
                other => return Err(failure(format!("--unset {other:?}: not a field that can be cleared"))),
            }
        }
        if let Some(provider) = self.provider {
            agent.provider = provider;
        }
        let strings = [
            (self.url, &mut agent.url),
            (self.model, &mut agent.model),
            (self.api_key_env, &mut agent.api_key_env),
            (self.api_key_keyring, &mut agent.api_key_keyring),
            (self.command, &mut agent.command),
            (self.cwd, &mut agent.cwd),
            (self.system_prompt, &mut agent.system_prompt),
            (self.tool, &mut agent.tool),
            (self.request_argument, &mut agent.request_argument),
            (self.context_argument, &mut agent.context_argument),
        ];
        for (given, slot) in strings {
            if given.is_some() {
                *slot = given;
            }
        }
        if self.tasks {
            agent.tasks = Some(true);
        }
        if self.approval.is_some() {
            agent.approval = self.approval;
        }
        if self.autonomy.is_some() {
            agent.autonomy = self.autonomy;
        }
        if self.timeout_secs.is_some() {
            agent.timeout_secs = self.timeout_secs;
        }
        if self.idle_timeout_secs.is_some() {
            agent.idle_timeout_secs = self.idle_timeout_secs;
        }
        if !self.args.is_empty() {
            agent.args = self.args;
        }
        if !self.env.is_empty() {
            agent.env.clear();
            for pair in self.env {
                let (name, value) =
                    pair.split_once('=').ok_or_else(|| failure(format!("--env {pair:?}: write NAME=VALUE")))?;
                agent.env.insert(name.to_string(), value.to_string());
            }
        }
        Ok(())
    }
}

fn failure(message: String) -> Failure {
    Failure { code: 1, message }
}

pub(crate) fn add(path: &Path, name: String, fields: AgentFields) -> Result<ExitCode, Failure> {
    let provider = fields.provider.ok_or_else(|| failure("say which kind of agent: --provider".into()))?;
    let mut agent = AgentConfig::new(name, provider);
    fields.apply(&mut agent)?;
    save(path, &Edit::AddAgent { agent })
}

pub(crate) fn edit(
    path: &Path,
    name: String,
    rename: Option<String>,
    fields: AgentFields,
) -> Result<ExitCode, Failure> {
    let config = load(path)?.config;
    let mut agent =
        config.agent(&name).ok_or_else(|| failure(format!("no agent named {name:?} is configured")))?.clone();
    fields.apply(&mut agent)?;
    if let Some(new_name) = rename {
        agent.name = new_name;
    }
    save(path, &Edit::EditAgent { name, agent })
}

pub(crate) fn remove(path: &Path, name: String, remove_tool_entries: bool) -> Result<ExitCode, Failure> {
    let config = load(path)?.config;
    let pointing = config.agent_tools.iter().filter(|entry| entry.agent == name).count()
        + config.agents.iter().flat_map(|agent| &agent.tools).filter(|entry| entry.agent == name).count();
    let tool_entries = if remove_tool_entries { EntryFate::Remove } else { EntryFate::Keep };
    let code = save(path, &Edit::RemoveAgent { name: name.clone(), tool_entries })?;
    if pointing > 0 && !remove_tool_entries {
        eprintln!(
            "note: {pointing} tool entr{} still name {name:?} (skipped until such an agent exists); --remove-tool-entries removes them",
            if pointing == 1 { "y" } else { "ies" }
        );
    }
    Ok(code)
}

pub(crate) fn set_roles(
    path: &Path,
    primary: Option<String>,
    escalation: Option<String>,
    no_escalation: bool,
) -> Result<ExitCode, Failure> {
    if primary.is_none() && escalation.is_none() && !no_escalation {
        return Err(failure("say what to set: --primary AGENT, --escalation AGENT or --no-escalation".into()));
    }
    let mut code = ExitCode::SUCCESS;
    if primary.is_some() {
        code = save(path, &Edit::SetPrimary { agent: primary })?;
    }
    if escalation.is_some() || no_escalation {
        code = save(path, &Edit::SetEscalation { agent: escalation })?;
    }
    Ok(code)
}

/// The forms' "test connection" for a configured agent: exit 0 when every step passed.
pub(crate) fn test(path: &Path, name: &str, as_json: bool) -> Result<ExitCode, Failure> {
    let config = load(path)?.config;
    let agent = config.agent(name).ok_or_else(|| failure(format!("no agent named {name:?} is configured")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| failure(format!("cannot start the runtime: {error}")))?;
    let report = runtime.block_on(test_connection(agent, std::env::var_os("PATH")));
    if as_json {
        println!("{}", serde_json::to_string(&report).expect("the report serializes"));
    } else {
        for step in &report.steps {
            let mark = if step.ok { "ok  " } else { "FAIL" };
            println!("{mark} {} ({} ms): {}", step.name, step.millis, printable(&step.detail));
        }
    }
    Ok(if report.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

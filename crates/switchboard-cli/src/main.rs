//! The headless `switchboard` binary: checks and edits the config, lists the tools
//! an agent is offered, and runs a turn with its events on stdout. It parses
//! arguments, calls switchboard-core and prints; nothing more.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;
use switchboard_core::config::edit::{self, Edit, EditError, ToolTarget};
use switchboard_core::config::store::{self, ConfigError};
use switchboard_core::config::{global_tools, merged_tools, ResolvedTool};
use switchboard_core::dispatch::limits_for;
use switchboard_core::tools::{offered_tools, Standing};
use switchboard_core::{
    ApprovalDecision, ApprovalPolicy, CallEvent, CallStatus, Dispatcher, EventKind, Session, TurnControl, TurnRequest,
};

/// Exit code for an invalid config.
const EXIT_INVALID: u8 = 2;

#[derive(Parser)]
#[command(name = "switchboard", version, about = "Agents calling agents as tools: the headless Switchboard engine")]
struct Cli {
    /// The config file (else $SWITCHBOARD_CONFIG, else ~/.config/switchboard/config.json).
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate the config: exit 0 when valid (warnings on stderr), 2 with every problem when not.
    Check,
    /// List, inspect and edit tool-agent entries.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Run one user turn and print its events.
    Ask(AskArgs),
}

#[derive(Args)]
struct Scope {
    /// An agent's own entries.
    #[arg(long = "for", value_name = "AGENT", conflicts_with = "global")]
    for_agent: Option<String>,
    /// The global `agent_tools` entries.
    #[arg(long)]
    global: bool,
}

#[derive(Subcommand)]
enum ToolsCommand {
    /// The merged list for an agent (disabled entries included), or the global entries.
    List {
        #[command(flatten)]
        scope: Scope,
        #[arg(long)]
        json: bool,
    },
    /// The OpenAI function definitions the agent is offered, as sent on the wire.
    Schema {
        #[arg(long = "for", value_name = "AGENT")]
        for_agent: String,
    },
    Enable {
        tool_agent: String,
        #[command(flatten)]
        scope: Scope,
    },
    Disable {
        tool_agent: String,
        #[command(flatten)]
        scope: Scope,
    },
    Add {
        tool_agent: String,
        #[arg(long)]
        description: String,
        #[command(flatten)]
        scope: Scope,
    },
    Remove {
        tool_agent: String,
        #[command(flatten)]
        scope: Scope,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum EventFormat {
    Jsonl,
    Pretty,
    None,
}

#[derive(Clone, Copy, ValueEnum)]
enum ApproveMode {
    All,
    None,
}

#[derive(Args)]
struct AskArgs {
    /// The agent to answer (default: the primary).
    #[arg(long)]
    agent: Option<String>,
    /// Answer every approval request (`all` or `none`); without it a terminal is
    /// asked each time, and a non-interactive run denies.
    #[arg(long, value_enum)]
    approve: Option<ApproveMode>,
    /// How to print the call-tree events.
    #[arg(long, value_enum, default_value = "pretty")]
    events: EventFormat,
    message: String,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("SWITCHBOARD_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let path = store::resolve_path(cli.config.as_deref());
    let result = match cli.command {
        Command::Check => check(&path),
        Command::Tools { command } => tools(&path, command),
        Command::Ask(arguments) => ask(&path, arguments),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("switchboard: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

struct Failure {
    code: u8,
    message: String,
}

impl From<ConfigError> for Failure {
    fn from(error: ConfigError) -> Failure {
        let code = match error {
            ConfigError::Io { .. } | ConfigError::Conflict { .. } => 1,
            _ => EXIT_INVALID,
        };
        Failure { code, message: error.to_string() }
    }
}

impl From<EditError> for Failure {
    fn from(error: EditError) -> Failure {
        match error {
            EditError::Config(error) => error.into(),
            other => Failure { code: 1, message: other.to_string() },
        }
    }
}

fn check(path: &Path) -> Result<ExitCode, Failure> {
    let loaded = load(path)?;
    for warning in &loaded.warnings {
        eprintln!("{}: {warning}", path.display());
    }
    println!(
        "{}: valid ({} agents, {} global tool entries)",
        path.display(),
        loaded.config.agents.len(),
        loaded.config.agent_tools.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn target_of(scope: &Scope) -> Result<ToolTarget, Failure> {
    match (&scope.for_agent, scope.global) {
        (Some(agent), false) => Ok(ToolTarget::Agent(agent.clone())),
        (None, true) => Ok(ToolTarget::Global),
        _ => Err(Failure { code: 1, message: "say which list: --for AGENT or --global".into() }),
    }
}

fn tools(path: &Path, command: ToolsCommand) -> Result<ExitCode, Failure> {
    let edit = match command {
        ToolsCommand::List { scope, json } => return list(path, &scope, json),
        ToolsCommand::Schema { for_agent } => {
            let loaded = load(path)?;
            if loaded.config.agent(&for_agent).is_none() {
                return Err(Failure { code: 1, message: format!("no agent named {for_agent:?} is configured") });
            }
            let agent = loaded.config.agent(&for_agent).expect("checked above");
            let max_depth = limits_for(&loaded.config, agent, None).effective_max_depth();
            let definitions: Vec<_> = offered_tools(&loaded.config, &for_agent, Standing::Root, &[], max_depth)
                .into_iter()
                .map(|tool| tool.definition)
                .collect();
            println!("{}", serde_json::to_string_pretty(&definitions).expect("definitions serialize"));
            return Ok(ExitCode::SUCCESS);
        }
        ToolsCommand::Enable { tool_agent, scope } => Edit::EnableTool { target: target_of(&scope)?, tool_agent },
        ToolsCommand::Disable { tool_agent, scope } => Edit::DisableTool { target: target_of(&scope)?, tool_agent },
        ToolsCommand::Add { tool_agent, description, scope } => {
            Edit::AddTool { target: target_of(&scope)?, tool_agent, description }
        }
        ToolsCommand::Remove { tool_agent, scope } => Edit::RemoveTool { target: target_of(&scope)?, tool_agent },
    };
    let current = load(path)?;
    let applied = edit::apply(path, &current.version, &edit)?;
    for warning in &applied.loaded.warnings {
        eprintln!("{}: {warning}", path.display());
    }
    println!(
        "saved {}; runners to evict: {}",
        path.display(),
        if applied.evict.is_empty() { "none".into() } else { applied.evict.join(", ") }
    );
    Ok(ExitCode::SUCCESS)
}

fn list(path: &Path, scope: &Scope, as_json: bool) -> Result<ExitCode, Failure> {
    let loaded = load(path)?;
    let config = &loaded.config;
    let (agent, rows): (Option<&str>, Vec<ResolvedTool>) = match target_of(scope)? {
        ToolTarget::Agent(agent) => {
            if config.agent(&agent).is_none() {
                return Err(Failure { code: 1, message: format!("no agent named {agent:?} is configured") });
            }
            (scope.for_agent.as_deref(), merged_tools(config, &agent))
        }
        ToolTarget::Global => (None, global_tools(config)),
    };
    if as_json {
        println!("{}", json!({ "agent": agent, "tools": rows }));
        return Ok(ExitCode::SUCCESS);
    }
    // The spec's columns, in its order: name, scope, description (truncated), enabled.
    let width = rows.iter().map(|row| row.agent.len()).max().unwrap_or(4).max(4);
    println!("{:<width$}  {:<8}  {:<60}  ENABLED", "NAME", "SCOPE", "DESCRIPTION");
    for row in rows {
        let description: String = if row.description.chars().count() > 60 {
            format!("{}…", row.description.chars().take(59).collect::<String>())
        } else {
            row.description
        };
        println!(
            "{:<width$}  {:<8}  {description:<60}  {}",
            row.agent,
            row.scope.as_str(),
            if row.enabled { "yes" } else { "no" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn ask(path: &Path, arguments: AskArgs) -> Result<ExitCode, Failure> {
    let loaded = load(path)?;
    for warning in &loaded.warnings {
        eprintln!("{}: {warning}", path.display());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure { code: 1, message: format!("cannot start the runtime: {error}") })?;
    let dispatcher = Dispatcher::new(loaded.config);
    let interactive = arguments.approve.is_none() && std::io::stdin().is_terminal();
    let policy = match arguments.approve {
        Some(ApproveMode::All) => ApprovalPolicy::ApproveAll,
        Some(ApproveMode::None) => ApprovalPolicy::DenyAll,
        None if interactive => ApprovalPolicy::Ask,
        None => ApprovalPolicy::DenyAll,
    };
    let control = TurnControl::new(policy, Session::default());
    let printer = Arc::new(Mutex::new(Printer::new(arguments.events)));
    let sink_printer = printer.clone();
    let (prompt_sender, prompt_receiver) = std::sync::mpsc::channel::<CallEvent>();
    let sink = Arc::new(move |event: CallEvent| {
        if let EventKind::ApprovalRequested { .. } = &event.kind {
            if interactive {
                let _ = prompt_sender.send(event.clone());
            } else if policy == ApprovalPolicy::DenyAll && arguments.approve.is_none() {
                eprintln!("switchboard: {} needs approval and nobody is at a terminal to give it: denied (pass --approve all to allow)", event.agent);
            }
        }
        sink_printer.lock().unwrap().print(&event)
    });
    if interactive {
        let answering = control.clone();
        std::thread::spawn(move || prompt_for_approvals(prompt_receiver, answering));
    }
    let interrupt = control.clone();
    let request = TurnRequest { agent: arguments.agent, history: Vec::new(), message: arguments.message };
    let outcome = runtime.block_on(async move {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupt.cancel_turn();
            }
        });
        dispatcher.run_turn(request, sink, control).await
    });
    if matches!(arguments.events, EventFormat::None | EventFormat::Pretty) {
        // A closed stdout (a pager quit early) is not an error worth a panic.
        let _ = writeln!(std::io::stdout(), "{}", outcome.text);
    }
    match outcome.status {
        CallStatus::Ok => Ok(ExitCode::SUCCESS),
        status => {
            let detail = outcome.error.map(|error| format!("{}: {}", error.kind, error.message)).unwrap_or_default();
            Err(Failure {
                code: 1,
                message: format!("the turn of {} ended with status {}: {detail}", outcome.answered_by, status.as_str()),
            })
        }
    }
}

/// Prints events as JSON lines, or as a live indented tree in which each call's
/// streamed text is printed a whole line at a time (parallel calls interleave
/// by line, never mid-word). Every write is flushed as it happens.
struct Printer {
    format: EventFormat,
    stdout: std::io::Stdout,
    /// For `pretty`: the unfinished line of each streaming call.
    partial: std::collections::HashMap<String, String>,
}

impl Printer {
    fn new(format: EventFormat) -> Printer {
        Printer { format, stdout: std::io::stdout(), partial: std::collections::HashMap::new() }
    }

    fn print(&mut self, event: &CallEvent) {
        let mut out = self.stdout.lock();
        match self.format {
            EventFormat::None => {}
            EventFormat::Jsonl => {
                let _ = writeln!(out, "{}", serde_json::to_string(event).expect("events serialize"));
            }
            EventFormat::Pretty => {
                let indent = "  ".repeat(event.depth as usize);
                match &event.kind {
                    // The root's text is printed whole at the end; children's stream here.
                    EventKind::TextDelta { text } if event.depth > 0 => {
                        let partial = self.partial.entry(event.call_id.clone()).or_default();
                        partial.push_str(text);
                        while let Some(newline) = partial.find('\n') {
                            let line: String = partial.drain(..=newline).collect();
                            let _ = writeln!(out, "{indent}  │ {}: {}", event.agent, line.trim_end());
                        }
                    }
                    EventKind::TextDelta { .. } | EventKind::ReasoningDelta { .. } | EventKind::UsageUpdated { .. } => {
                    }
                    EventKind::CallStarted { tool_name, .. } => {
                        let via = tool_name.as_deref().map(|name| format!(" ({name})")).unwrap_or_default();
                        let _ = writeln!(out, "{indent}▶ {}{via}", event.agent);
                    }
                    EventKind::ToolProgress { message, .. } => {
                        let _ = writeln!(out, "{indent}  … {}: {message}", event.agent);
                    }
                    EventKind::Escalated { from, to, .. } => {
                        let _ = writeln!(out, "{indent}⇢ {from} escalated to {to}");
                    }
                    EventKind::ApprovalRequested { .. } => {
                        let _ = writeln!(out, "{indent}  ? {} waits for approval", event.agent);
                    }
                    EventKind::ApprovalResolved { decision, by } => {
                        let _ = writeln!(out, "{indent}  ✓ {}: {} (by the {by})", event.agent, decision.as_str());
                    }
                    EventKind::CallFinished { status, usage_total, cost_total, error, .. } => {
                        if let Some(rest) = self.partial.remove(&event.call_id).filter(|rest| !rest.trim().is_empty()) {
                            let _ = writeln!(out, "{indent}  │ {}: {}", event.agent, rest.trim_end());
                        }
                        let tokens =
                            usage_total.map(|usage| format!(", {} tokens", usage.total_tokens)).unwrap_or_default();
                        let cost = cost_total.map(|cost| format!(", ${cost:.4}")).unwrap_or_default();
                        let error = error
                            .as_ref()
                            .map(|error| format!(": {} ({})", error.message, error.kind))
                            .unwrap_or_default();
                        let _ = writeln!(out, "{indent}■ {} {}{tokens}{cost}{error}", event.agent, status.as_str());
                    }
                }
            }
        }
        let _ = out.flush();
    }
}

/// Asks on the terminal for each approval request, one at a time.
fn prompt_for_approvals(requests: std::sync::mpsc::Receiver<CallEvent>, control: TurnControl) {
    let stdin = std::io::stdin();
    for event in requests {
        let EventKind::ApprovalRequested { input, limits, .. } = &event.kind else { continue };
        let request =
            input.as_ref().and_then(|input| input.get("request")).and_then(|request| request.as_str()).unwrap_or("");
        let decision = loop {
            eprint!(
                "\nApprove the call to {} (depth {}, {} calls left in this turn)?\n  request: {request}\n  [o]nce, [a]lways for this agent, [d]eny: ",
                event.agent, limits.depth, limits.calls_left
            );
            let mut line = String::new();
            if stdin.read_line(&mut line).unwrap_or(0) == 0 {
                break ApprovalDecision::Deny;
            }
            match line.trim().to_lowercase().as_str() {
                "o" | "once" | "y" | "yes" => break ApprovalDecision::ApproveOnce,
                "a" | "always" => break ApprovalDecision::ApproveAlways,
                "d" | "deny" | "n" | "no" => break ApprovalDecision::Deny,
                _ => eprintln!("answer o, a or d"),
            }
        };
        control.resolve_approval(&event.call_id, decision);
    }
}

/// Loads the config, creating it with the demo default when there is none (and saying so).
fn load(path: &Path) -> Result<store::Loaded, ConfigError> {
    if !path.exists() {
        eprintln!("switchboard: {} did not exist; created it with the demo agents", path.display());
    }
    store::load_or_create(path)
}

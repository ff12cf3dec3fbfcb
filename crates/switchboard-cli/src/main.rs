//! The headless `switchboard` binary: checks and edits the config, lists the tools
//! an agent is offered, runs a turn (alone or in a chat session shared with the
//! desktop app) with its events on stdout, and lists, shows and exports sessions.
//! It parses arguments, calls switchboard-core and prints; nothing more.

mod agent;
mod agent_edit;
mod agent_key;
mod ask;
mod mcp;
mod mcp_connect;
mod report;
mod rerun;
mod sessions;
mod terminal;
mod traces;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;
use switchboard_core::config::edit::{self, Edit, EditError, ToolTarget};
use switchboard_core::config::store::{self, ConfigError};
use switchboard_core::config::{global_tools, merged_tools, ResolvedTool};
use switchboard_core::sessions::SessionError;
use switchboard_core::tools::offered_for_root;
use switchboard_core::ApprovalPolicy;

/// Exit code for an invalid config.
const EXIT_INVALID: u8 = 2;

#[derive(Parser)]
#[command(name = "switchboard", version, about = "Agents calling agents as tools: the headless Switchboard engine")]
struct Cli {
    /// The config file (else $SWITCHBOARD_CONFIG, else ~/.config/switchboard/config.json).
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Where chat sessions are kept (else $SWITCHBOARD_DATA_DIR, else the desktop app's data folder).
    #[arg(long, global = true, value_name = "PATH")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per run: the size gap between subcommands costs nothing.
#[allow(clippy::large_enum_variant)]
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
    /// List, show and export chat sessions (the desktop app's too).
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// The delegation report over the sessions: per tool-agent, how its calls ended,
    /// their time, tokens and cost; per primary, whether delegating turns paid.
    Report(ReportArgs),
    /// Serve the tool-agents to MCP clients (stdio, or streamable HTTP with --http).
    Mcp(McpArgs),
    /// Add, edit, remove, test an agent, or look at its server.
    Agent {
        #[command(subcommand)]
        command: AgentCommand,
    },
    /// Choose the primary and escalation agents.
    Roles {
        #[command(subcommand)]
        command: RolesCommand,
    },
}

#[derive(Subcommand)]
enum RolesCommand {
    Set {
        #[arg(long)]
        primary: Option<String>,
        #[arg(long, conflicts_with = "no_escalation")]
        escalation: Option<String>,
        /// No escalation agent.
        #[arg(long)]
        no_escalation: bool,
    },
}

#[derive(Subcommand)]
enum AgentCommand {
    /// Add an agent (`--provider` and the fields it needs).
    Add {
        name: String,
        #[command(flatten)]
        fields: agent_edit::AgentFields,
    },
    /// Change the flags given (and `--rename`); roles and tool entries follow a rename.
    Edit {
        name: String,
        #[arg(long, value_name = "NEW_NAME")]
        rename: Option<String>,
        #[command(flatten)]
        fields: agent_edit::AgentFields,
    },
    /// Remove an agent (not the primary or escalation one).
    Remove {
        name: String,
        /// Also remove the tool entries that name it (kept, and skipped, otherwise).
        #[arg(long)]
        remove_tool_entries: bool,
    },
    /// Test the connection: the server's models and one tiny streamed request, an
    /// mcp server's tools, an a2a card, or where a command-line agent's program is.
    Test {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// List the tools of an mcp agent's server (the one it calls marked with *).
    Probe {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// An HTTP agent's API key in the system keyring (set, delete, status).
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Store the key (typed at the prompt, not shown, or piped in on one line;
    /// never an argument) and point the agent's `api_key_keyring` at it.
    Set {
        name: String,
        /// The keyring entry (the agent's `api_key_keyring`, else its name).
        #[arg(long)]
        entry: Option<String>,
    },
    /// Delete the stored key and the agent's `api_key_keyring`.
    Delete { name: String },
    /// Say where the agent's key comes from and whether it is there (exit 1 when not).
    Status { name: String },
}

/// `--approve`'s words (`ask`, `all`, `none`, as `words` lists) read as the core's policy.
fn approval_words(words: &'static [&'static str]) -> impl clap::builder::TypedValueParser<Value = ApprovalPolicy> {
    clap::builder::PossibleValuesParser::new(words)
        .map(|word| word.parse::<ApprovalPolicy>().expect("a word of ApprovalPolicy::as_str"))
}

#[derive(Subcommand)]
enum McpCommand {
    /// Print (or, with --write, set) an MCP client's config for this server:
    /// claude-code, codex, gemini or qwen.
    Connect(mcp_connect::ConnectArgs),
    /// Print the app's MCP endpoint token from the system keyring, for a client's
    /// environment: `export SWITCHBOARD_MCP_TOKEN="$(switchboard mcp token)"`.
    Token,
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
struct McpArgs {
    #[command(subcommand)]
    command: Option<McpCommand>,
    /// Serve this agent's effective tool-agents (default: the global entries).
    #[arg(long = "as", value_name = "AGENT")]
    as_agent: Option<String>,
    /// Serve streamable HTTP on this address (loopback, e.g. 127.0.0.1:8765; port 0 picks one) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// How approval requests of `ask` entries are answered: `ask` through the client
    /// (MCP elicitation; interactive Claude Code shows it, `claude -p` and `codex exec`
    /// cannot and their calls are then denied, saying the client did not ask anyone),
    /// `all` runs them, `none` denies them. `mcp connect` says what each client does.
    #[arg(long, value_parser = approval_words(&["ask", "all", "none"]), default_value = "ask")]
    approve: ApprovalPolicy,
    /// Require `Authorization: Bearer <token>`, the token read from this environment variable.
    #[arg(long, value_name = "NAME", requires = "http")]
    token_env: Option<String>,
    /// Allow a non-loopback --http address (needs --token-env).
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// While a call is silent, send a progress notification every SECS seconds,
    /// so clients that reset their timeout on progress keep waiting.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    keepalive: u64,
    /// A call a client asked for as a task (the MCP tasks extension) lives this
    /// long, running or ended, for the client to come back to with tasks/get; a
    /// task still running then ends as failed.
    #[arg(long, value_name = "SECS", default_value_t = 3600)]
    task_ttl: u64,
    /// --http: a session silent this long is closed (a running call's progress is
    /// not silence).
    #[arg(long, value_name = "SECS", default_value_t = 900, requires = "http")]
    session_idle: u64,
    /// --http: the most sessions kept at once; past it the one unused longest is closed.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "http")]
    max_sessions: usize,
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// The sessions, most recently used first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// A session's conversation, turn by turn (`--json`: its whole log).
    Show {
        session: String,
        #[arg(long)]
        json: bool,
    },
    /// A turn's call-tree events as a JSON array (the last turn unless `--turn`);
    /// with `--otlp`, every turn (or `--turn`) sent as OpenTelemetry traces; with
    /// `--markdown`, the whole conversation as Markdown.
    Export {
        session: String,
        #[arg(long, conflicts_with = "markdown")]
        turn: Option<String>,
        /// Send to the OTLP endpoint (the config's telemetry section or $OTEL_EXPORTER_OTLP_ENDPOINT).
        #[arg(long, conflicts_with = "markdown")]
        otlp: bool,
        /// The session's conversation as Markdown: each message, who answered, the answer and its calls.
        #[arg(long)]
        markdown: bool,
    },
    /// Run one logged tool-agent call again (CALL: `c2`, the latest turn's, or
    /// `TURN:c2`), as a turn of the session, and show both runs side by side.
    Rerun(RerunArgs),
    /// Continue an interrupted turn (the session's last one unless `--turn`): the
    /// tool-agent calls it had finished are not run or paid again; the ones that
    /// were running run again. A turn that ended is not resumed.
    Resume(ResumeArgs),
}

#[derive(Args)]
struct ResumeArgs {
    session: String,
    /// The interrupted turn (`sessions show` marks them).
    #[arg(long)]
    turn: Option<String>,
    /// Answer every approval request (`all` or `none`); without it a terminal is
    /// asked each time, and a non-interactive run denies.
    #[arg(long, value_parser = approval_words(&["all", "none"]))]
    approve: Option<ApprovalPolicy>,
    /// How to print the call-tree events.
    #[arg(long, value_enum, default_value = "pretty")]
    events: EventFormat,
}

#[derive(Args)]
struct RerunArgs {
    session: String,
    call: String,
    /// A sharper request instead of the logged one.
    #[arg(long)]
    request: Option<String>,
    /// Answer its approval requests (`all` or `none`); without it they are denied.
    #[arg(long, value_parser = approval_words(&["all", "none"]))]
    approve: Option<ApprovalPolicy>,
    #[arg(long)]
    json: bool,
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
    /// Why the agent is offered what it is: every entry that could reach its list,
    /// why each absent one is absent, and, when `limits.narrow_delegation` is on
    /// anywhere, what it and its delegates are offered at each depth of each chain.
    Explain {
        #[arg(long = "for", value_name = "AGENT")]
        for_agent: String,
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

#[derive(Args)]
struct ReportArgs {
    /// The first day to count (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// The last day to count (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// One row per tool-agent, for a spreadsheet.
    #[arg(long)]
    csv: bool,
}

#[derive(Args)]
struct AskArgs {
    /// The agent to answer (default: the primary).
    #[arg(long)]
    agent: Option<String>,
    /// Answer every approval request (`all` or `none`); without it a terminal is
    /// asked each time, and a non-interactive run denies.
    #[arg(long, value_parser = approval_words(&["all", "none"]))]
    approve: Option<ApprovalPolicy>,
    /// How to print the call-tree events.
    #[arg(long, value_enum, default_value = "pretty")]
    events: EventFormat,
    /// Run the turn in this chat session (by id or title; created when there is
    /// none): its history is sent along, and the turn is logged in it.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    message: String,
}

fn main() -> ExitCode {
    // Diagnostics only (every failure a user meets is reported in words): warnings
    // and up, without the MCP SDK's own lines, which quote what servers send
    // (`SWITCHBOARD_LOG=rmcp=debug` shows them); colour only on a terminal.
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWITCHBOARD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let path = store::resolve_path(cli.config.as_deref());
    let data_dir = cli.data_dir.unwrap_or_else(switchboard_core::sessions::default_data_dir);
    let result = match cli.command {
        Command::Check => check(&path),
        Command::Tools { command } => tools(&path, command),
        Command::Ask(arguments) => ask::ask(&path, &data_dir, arguments),
        Command::Sessions { command } => sessions::sessions_command(&path, &data_dir, command),
        Command::Report(arguments) => report::report(&data_dir, arguments),
        Command::Mcp(McpArgs { command: Some(McpCommand::Connect(connect)), .. }) => {
            mcp_connect::connect(&path, connect)
        }
        Command::Mcp(McpArgs { command: Some(McpCommand::Token), .. }) => mcp_connect::print_app_token(),
        Command::Mcp(arguments) => mcp::mcp(&path, arguments),
        Command::Agent { command: AgentCommand::Probe { name, json } } => agent::probe(&path, &name, json),
        Command::Agent { command: AgentCommand::Add { name, fields } } => agent_edit::add(&path, name, fields),
        Command::Agent { command: AgentCommand::Edit { name, rename, fields } } => {
            agent_edit::edit(&path, name, rename, fields)
        }
        Command::Agent { command: AgentCommand::Remove { name, remove_tool_entries } } => {
            agent_edit::remove(&path, name, remove_tool_entries)
        }
        Command::Agent { command: AgentCommand::Test { name, json } } => agent_edit::test(&path, &name, json),
        Command::Agent { command: AgentCommand::Key { command } } => match command {
            KeyCommand::Set { name, entry } => agent_key::set(&path, &name, entry),
            KeyCommand::Delete { name } => agent_key::delete(&path, &name),
            KeyCommand::Status { name } => agent_key::status(&path, &name),
        },
        Command::Roles { command: RolesCommand::Set { primary, escalation, no_escalation } } => {
            agent_edit::set_roles(&path, primary, escalation, no_escalation)
        }
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("switchboard: {}", terminal::printable(&failure.message));
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
        let missing = matches!(&error, ConfigError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound);
        let code = match error {
            ConfigError::Io { .. } | ConfigError::Conflict { .. } => 1,
            _ => EXIT_INVALID,
        };
        let hint = if missing {
            "\n(a config named by --config or $SWITCHBOARD_CONFIG must exist; without either, the default location is created with the demo agents on first start)"
        } else {
            ""
        };
        Failure { code, message: format!("{error}{hint}") }
    }
}

impl From<SessionError> for Failure {
    fn from(error: SessionError) -> Failure {
        Failure { code: 1, message: error.to_string() }
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
    for (index, message) in switchboard_core::runner::cli::presets::missing_programs(&loaded.config.agents) {
        eprintln!("{}: warning: agents[{index}].command: {message}", path.display());
    }
    println!(
        "{}: valid ({} agents, {} global tool entries)",
        path.display(),
        loaded.config.agents.len(),
        loaded.config.agent_tools.len()
    );
    for agent in &loaded.config.agents {
        if let Some(note) = switchboard_core::runner::cli::presets::autonomy_note(agent) {
            println!("agent {:?}: {note}", agent.name);
        }
    }
    // Agent CLIs on PATH that no agent uses yet, with the preset that runs each.
    let search_path = std::env::var_os("PATH");
    for found in switchboard_core::setup::find_cli_agents(search_path) {
        if !loaded.config.agents.iter().any(|agent| agent.provider == found.agent.provider) {
            println!(
                "found {} at {}: add it with `switchboard agent add {} --provider {}`",
                found.program,
                found.path,
                found.agent.name,
                found.agent.provider.as_str()
            );
        }
    }
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
        ToolsCommand::Explain { for_agent, json } => {
            let loaded = load(path)?;
            let Some(explained) = switchboard_core::tools::explain::explain(&loaded.config, &for_agent) else {
                return Err(Failure { code: 1, message: format!("no agent named {for_agent:?} is configured") });
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&explained).expect("the explanation serializes"));
            } else {
                print!("{}", explain_text(&explained));
            }
            return Ok(ExitCode::SUCCESS);
        }
        ToolsCommand::Schema { for_agent } => {
            let loaded = load(path)?;
            if loaded.config.agent(&for_agent).is_none() {
                return Err(Failure { code: 1, message: format!("no agent named {for_agent:?} is configured") });
            }
            let definitions: Vec<_> =
                offered_for_root(&loaded.config, Some(&for_agent)).into_iter().map(|tool| tool.definition).collect();
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
    save(path, &edit)
}

/// Applies one edit to the file as it is now and says what it did.
fn save(path: &Path, edit: &Edit) -> Result<ExitCode, Failure> {
    let current = load(path)?;
    let applied = edit::apply(path, &current.version, edit)?;
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
    // The columns, in order: name, scope, description (truncated), enabled.
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

/// Loads the config; on a first start (the default location, missing) it is
/// created with the demo agents, and said so. A named path must exist.
fn load(path: &Path) -> Result<store::Loaded, ConfigError> {
    let (loaded, created) = store::load_on_first_start(path)?;
    if created {
        eprintln!("switchboard: {} did not exist; created it with the demo agents", path.display());
    }
    Ok(loaded)
}

/// `tools explain` for a terminal: the entries, then the chains when narrowing is on.
fn explain_text(explained: &switchboard_core::tools::explain::ToolsExplained) -> String {
    use std::fmt::Write as _;
    let mut text = format!("{} (max depth {})\n", explained.agent, explained.max_depth);
    for entry in explained.entries.iter().filter(|entry| !entry.overridden) {
        let why = entry.absent.map(|absence| format!("not offered: {}", absence.words())).unwrap_or("offered".into());
        let _ = writeln!(text, "  {:<24} {:<8} {why}", entry.tool_name, entry.scope.as_str());
    }
    if !explained.chains.is_empty() {
        text.push_str("\nAlong the chain (limits.narrow_delegation is on):\n");
        for link in &explained.chains {
            let offered = if link.offered.is_empty() { "nothing".to_string() } else { link.offered.join(", ") };
            let _ = write!(
                text,
                "{}{} (depth {}{}): offered {offered}",
                "  ".repeat(link.depth as usize + 1),
                link.agent,
                link.depth,
                if link.narrowed { ", narrowed" } else { "" }
            );
            if !link.narrowed_away.is_empty() {
                let _ = write!(text, "; narrowed away: {}", link.narrowed_away.join(", "));
            }
            text.push('\n');
        }
        if explained.chains.len() >= switchboard_core::tools::explain::MAX_CHAIN_LINKS {
            text.push_str("  … (the first links only)\n");
        }
    }
    text
}

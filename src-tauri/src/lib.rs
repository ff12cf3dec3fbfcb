//! The desktop shell: Tauri commands that call switchboard-core, a channel per turn
//! for the call-tree events, one app-wide event for config changes, and the
//! TypeScript bindings export. No engine logic lives here.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::store::{self, ConfigError, Loaded, Version};
use switchboard_core::config::watch::{self, ConfigWatch, Reload};
use switchboard_core::config::{global_tools, merged_tools, Problem, ResolvedTool};
use switchboard_core::runner::Message;
use switchboard_core::{
    AgentUsage, ApprovalDecision, ApprovalPolicy, CallEvent, CallStatus, Config, Dispatcher, Session, TurnControl, TurnRequest, Usage,
};
use tauri::ipc::Channel;
use tauri::{Manager, Runtime, State};
use tauri_specta::Event;

/// The one error shape the UI shows as it is.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct AppError {
    /// `config_syntax`, `config_type`, `config_invalid`, `config_conflict`, `io`, `not_found`.
    pub kind: String,
    pub message: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl From<ConfigError> for AppError {
    fn from(error: ConfigError) -> AppError {
        let message = error.to_string();
        let (kind, path, line, column) = match &error {
            ConfigError::Io { path, .. } => ("io", Some(path), None, None),
            ConfigError::Syntax { path, line, column, .. } => ("config_syntax", Some(path), Some(*line), Some(*column)),
            ConfigError::Type { path, line, column, .. } => ("config_type", Some(path), Some(*line), Some(*column)),
            ConfigError::Invalid { path, .. } => ("config_invalid", Some(path), None, None),
            ConfigError::Conflict { path } => ("config_conflict", Some(path), None, None),
        };
        AppError {
            kind: kind.into(),
            message,
            path: path.map(|path| path.display().to_string()),
            line: line.map(|line| line as u32),
            column: column.map(|column| column as u32),
        }
    }
}

/// The config as the settings area shows it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ConfigState {
    pub path: String,
    pub version: Option<String>,
    /// The config in force (the last good one when the file on disk is broken).
    pub config: Config,
    pub warnings: Vec<Problem>,
    /// Why the file on disk is not in force, if it is not.
    pub error: Option<AppError>,
}

/// Emitted when the config file changed on disk and was reloaded (or refused).
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct ConfigChanged {
    pub version: Option<String>,
    pub changed_agents: Vec<String>,
    pub error: Option<AppError>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChatRole {
    User,
    Assistant,
}

/// One earlier message of the chat, sent along as history.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

/// A user turn as the chat sends it.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct SendRequest {
    /// Chosen by the UI so it can cancel the turn while it runs.
    pub turn_id: String,
    /// `@agent` handoff; the primary when absent.
    pub agent: Option<String>,
    pub message: String,
    pub history: Vec<ChatMessage>,
}

/// How a turn ended; the details came through the channel.
#[derive(Debug, Clone, Serialize, Type)]
pub struct TurnSummary {
    pub status: CallStatus,
    pub text: String,
    pub answered_by: String,
    pub usage_total: Option<Usage>,
    pub cost_total: Option<f64>,
}

/// What the app keeps between commands.
pub struct AppState {
    config_path: PathBuf,
    dispatcher: Arc<Dispatcher>,
    current: Arc<Mutex<CurrentConfig>>,
    _watch: Option<ConfigWatch>,
    turns: Mutex<HashMap<String, TurnControl>>,
    /// The chat session: "approve always" answers, persistent delegates'
    /// conversations and the usage counters (one session per app run for now).
    session: Session,
}

struct CurrentConfig {
    version: Option<Version>,
    warnings: Vec<Problem>,
    error: Option<AppError>,
}

impl AppState {
    /// Loads (or creates) the config at `config_path` and starts watching it;
    /// `on_change` is told about every reload.
    pub fn open(config_path: PathBuf, on_change: impl Fn(ConfigChanged) + Send + 'static) -> AppState {
        let (initial, error) = match store::load_or_create(&config_path) {
            Ok(loaded) => (loaded, None),
            Err(error) => {
                // Keep the app usable and the broken file untouched: nothing is in
                // force until the file is fixed, and the watcher picks the fix up.
                let bytes = std::fs::read(&config_path).unwrap_or_default();
                let empty = Loaded { config: Config::default(), version: Version::of(&bytes), warnings: vec![] };
                (empty, Some(AppError::from(error)))
            }
        };
        let dispatcher = Arc::new(Dispatcher::new(initial.config.clone()));
        let current = Arc::new(Mutex::new(CurrentConfig {
            version: error.is_none().then(|| initial.version.clone()),
            warnings: initial.warnings.clone(),
            error,
        }));
        let watch_dispatcher = dispatcher.clone();
        let watch_current = current.clone();
        let watch = watch::spawn(&config_path, &initial, move |reload| {
            let changed = match reload {
                Reload::Applied { loaded, changed_agents } => {
                    watch_dispatcher.replace_config(loaded.config.clone(), &changed_agents);
                    let mut current = watch_current.lock().unwrap();
                    current.version = Some(loaded.version.clone());
                    current.warnings = loaded.warnings.clone();
                    current.error = None;
                    ConfigChanged { version: Some(loaded.version.0.clone()), changed_agents, error: None }
                }
                Reload::Rejected { error } => {
                    let error = AppError::from(error);
                    watch_current.lock().unwrap().error = Some(error.clone());
                    ConfigChanged { version: None, changed_agents: vec![], error: Some(error) }
                }
            };
            on_change(changed);
        });
        let watch = match watch {
            Ok(watch) => Some(watch),
            Err(error) => {
                tracing::warn!(%error, "config hot reload is off");
                None
            }
        };
        AppState { config_path, dispatcher, current, _watch: watch, turns: Mutex::new(HashMap::new()), session: Session::default() }
    }
}

#[tauri::command]
#[specta::specta]
fn get_config_state(state: State<'_, AppState>) -> ConfigState {
    let current = state.current.lock().unwrap();
    ConfigState {
        path: state.config_path.display().to_string(),
        version: current.version.as_ref().map(|version| version.0.clone()),
        config: (*state.dispatcher.config()).clone(),
        warnings: current.warnings.clone(),
        error: current.error.clone(),
    }
}

/// The merged tool-agent list of an agent (disabled entries included), or the
/// global entries as written when `agent` is absent.
#[tauri::command]
#[specta::specta]
fn list_tools(state: State<'_, AppState>, agent: Option<String>) -> Vec<ResolvedTool> {
    let config = state.dispatcher.config();
    match agent {
        Some(agent) => merged_tools(&config, &agent),
        None => global_tools(&config),
    }
}

/// Runs one user turn; every event of its call tree goes through `on_event`.
#[tauri::command]
#[specta::specta]
async fn send_message(
    state: State<'_, AppState>,
    request: SendRequest,
    on_event: Channel<CallEvent>,
) -> Result<TurnSummary, AppError> {
    let control = TurnControl::new(ApprovalPolicy::Ask, state.session.clone());
    state.turns.lock().unwrap().insert(request.turn_id.clone(), control.clone());
    let history = request
        .history
        .iter()
        .map(|message| match message.role {
            ChatRole::User => Message::user(message.content.clone()),
            ChatRole::Assistant => Message::assistant(message.content.clone()),
        })
        .collect();
    let turn = TurnRequest { agent: request.agent.clone(), history, message: request.message.clone() };
    let sink = Arc::new(move |event: CallEvent| {
        let _ = on_event.send(event);
    });
    let outcome = state.dispatcher.run_turn(turn, sink, control).await;
    state.turns.lock().unwrap().remove(&request.turn_id);
    Ok(TurnSummary {
        status: outcome.status,
        text: outcome.text,
        answered_by: outcome.answered_by,
        usage_total: outcome.usage_total,
        cost_total: outcome.cost_total,
    })
}

/// Cancels a running turn; false when it is not running.
#[tauri::command]
#[specta::specta]
fn cancel_turn(state: State<'_, AppState>, turn_id: String) -> bool {
    match state.turns.lock().unwrap().get(&turn_id) {
        Some(control) => {
            control.cancel_turn();
            true
        }
        None => false,
    }
}

/// Calls, tokens and cost per agent in this session: the counter on delegations.
#[tauri::command]
#[specta::specta]
fn get_usage(state: State<'_, AppState>) -> Vec<AgentUsage> {
    state.session.usage_by_agent()
}

/// Answers the approval request of a waiting call; false when none is waiting.
#[tauri::command]
#[specta::specta]
fn resolve_approval(state: State<'_, AppState>, turn_id: String, call_id: String, decision: ApprovalDecision) -> bool {
    state.turns.lock().unwrap().get(&turn_id).is_some_and(|control| control.resolve_approval(&call_id, decision))
}

/// Cancels one call of a running turn with its subtree; its parent continues.
#[tauri::command]
#[specta::specta]
fn cancel_call(state: State<'_, AppState>, turn_id: String, call_id: String) -> bool {
    state.turns.lock().unwrap().get(&turn_id).is_some_and(|control| control.cancel_call(&call_id))
}

/// The commands and events the UI may use, with their TypeScript bindings.
pub fn specta_builder<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(tauri_specta::collect_commands![get_config_state, list_tools, send_message, cancel_turn, cancel_call, resolve_approval, get_usage])
        .events(tauri_specta::collect_events![ConfigChanged])
}

/// The TypeScript of the bindings, as `ui/src/bindings.ts` must hold it.
pub fn export_bindings(path: &std::path::Path) -> Result<(), String> {
    specta_builder::<tauri::Wry>()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated from the Rust types by src-tauri's bindings test. Do not edit.\n// @ts-nocheck"),
            path,
        )
        .map_err(|error| error.to_string())
}

/// Sets the app up on `builder`: the real one, or Tauri's mock builder in tests.
pub fn configure<R: Runtime>(builder: tauri::Builder<R>, config_path: PathBuf) -> tauri::Builder<R> {
    let specta = specta_builder::<R>();
    builder
        .plugin(tauri_plugin_store::Builder::new().build())
        .invoke_handler(specta.invoke_handler())
        .setup(move |app| {
            specta.mount_events(app);
            let handle = app.handle().clone();
            let state = AppState::open(config_path.clone(), move |changed| {
                if let Err(error) = changed.emit(&handle) {
                    tracing::warn!(%error, "could not tell the window about a config change");
                }
            });
            app.manage(state);
            Ok(())
        })
}

/// Starts the desktop app on the config that `--config`, `$SWITCHBOARD_CONFIG` or
/// the platform config dir names.
pub fn run() {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    let mut arguments = std::env::args().skip(1);
    let mut explicit = None;
    while let Some(argument) = arguments.next() {
        if argument == "--config" {
            explicit = arguments.next().map(PathBuf::from);
        }
    }
    let config_path = store::resolve_path(explicit.as_deref());
    configure(tauri::Builder::default(), config_path)
        .run(tauri::generate_context!())
        .expect("the Switchboard window could not start");
}

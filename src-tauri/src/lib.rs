//! The desktop shell: Tauri commands that call switchboard-core (one line of glue
//! each), a channel per turn for the call-tree events, app-wide events for config
//! changes and for calls that come in through the built-in MCP endpoint
//! (`mcp.rs`), and the TypeScript bindings export. No engine logic lives here:
//! turns in sessions, approvals and exports are `ChatSessions`' work.

mod config_forms;
mod desktop;
mod links;
mod mcp;
mod prefs;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::store::{self, ConfigError, Loaded, Version};
use switchboard_core::config::watch::{self, ConfigWatch, Reload};
use switchboard_core::config::{global_tools, merged_tools, Problem, ResolvedTool};
use switchboard_core::sessions::{ChatSessions, SessionError, SessionLog, SessionSummary, SessionTurn, DATA_DIR_ENV};
use switchboard_core::{ApprovalDecision, ApprovalPolicy, CallEvent, Config, Dispatcher, TurnOutcome};
use switchboard_mcp::McpServer;
use switchboard_otel::Telemetry;
use tauri::ipc::Channel;
use tauri::{Manager, Runtime, State};
use tauri_specta::Event;

pub use mcp::{McpServerStatus, OutsideCall, OutsideUpdate};
use prefs::PreferencesFile;
pub use prefs::{Preferences, Theme};

/// The one error shape the UI shows as it is.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct AppError {
    pub kind: AppErrorKind,
    pub message: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// What went wrong, for the UI to switch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AppErrorKind {
    /// The config file is not valid JSON (`line`, `column` say where).
    ConfigSyntax,
    /// A field of the config has the wrong type (`line`, `column` say where).
    ConfigType,
    /// The config parses but breaks a rule (every problem in `message`).
    ConfigInvalid,
    /// The file changed on disk since it was read; nothing was written.
    ConfigConflict,
    /// A file could not be read or written.
    Io,
    /// No such session or turn (an id that cannot name a session included).
    NotFound,
    /// A session with that id exists already.
    SessionExists,
    /// An edit that cannot be made as asked (an entry that exists already, an
    /// agent that is not there, the primary removed…); nothing was written.
    EditRefused,
}

impl AppError {
    fn new(kind: AppErrorKind, message: String) -> AppError {
        AppError { kind, message, path: None, line: None, column: None }
    }
}

impl From<SessionError> for AppError {
    fn from(error: SessionError) -> AppError {
        let kind = match &error {
            SessionError::NotFound(_) | SessionError::BadId(_) | SessionError::NoTurn { .. } => AppErrorKind::NotFound,
            SessionError::Exists(_) => AppErrorKind::SessionExists,
            SessionError::Io { .. } => AppErrorKind::Io,
        };
        AppError::new(kind, error.to_string())
    }
}

impl From<ConfigError> for AppError {
    fn from(error: ConfigError) -> AppError {
        let message = error.to_string();
        let (kind, path, line, column) = match &error {
            ConfigError::Io { path, .. } => (AppErrorKind::Io, Some(path), None, None),
            ConfigError::Syntax { path, line, column, .. } => {
                (AppErrorKind::ConfigSyntax, Some(path), Some(*line), Some(*column))
            }
            ConfigError::Type { path, line, column, .. } => {
                (AppErrorKind::ConfigType, Some(path), Some(*line), Some(*column))
            }
            ConfigError::Invalid { path, .. } => (AppErrorKind::ConfigInvalid, Some(path), None, None),
            ConfigError::Conflict { path } => (AppErrorKind::ConfigConflict, Some(path), None, None),
        };
        AppError {
            kind,
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
    /// The app created the config at this start (the demo agents) and nothing has
    /// been edited since: the UI offers the setup wizard.
    pub first_start: bool,
}

/// Emitted when the config file changed on disk and was reloaded (or refused).
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct ConfigChanged {
    pub version: Option<String>,
    pub changed_agents: Vec<String>,
    pub error: Option<AppError>,
}

/// A user turn as the chat sends it; the history comes from the session's log.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct SendRequest {
    /// The chat session the turn belongs to (its log receives every event).
    pub session_id: String,
    /// Chosen by the UI so it can cancel the turn while it runs.
    pub turn_id: String,
    /// `@agent` handoff; the primary when absent.
    pub agent: Option<String>,
    pub message: String,
}

/// What the app keeps between commands.
pub struct AppState {
    config_path: PathBuf,
    dispatcher: Arc<Dispatcher>,
    current: Arc<Mutex<CurrentConfig>>,
    _watch: Option<ConfigWatch>,
    /// Tells the window the config changed (reloaded from disk, or edited here).
    on_change: Arc<dyn Fn(ConfigChanged) + Send + Sync>,
    first_start: std::sync::atomic::AtomicBool,
    sessions: Arc<ChatSessions>,
    preferences: PreferencesFile,
    data_dir: PathBuf,
    /// The built-in MCP endpoint while it is switched on.
    mcp: tokio::sync::Mutex<Option<mcp::Running>>,
    /// Its server, for the config watcher to announce list changes.
    mcp_server: Arc<Mutex<Option<McpServer>>>,
    /// How an MCP call's updates reach the window.
    emit_outside: mcp::Emitter,
    /// Trace export, when the config or the `OTEL_*` variables ask for it.
    telemetry: Option<Arc<Telemetry>>,
    /// Why export is off although it was asked for.
    telemetry_problem: Option<String>,
}

/// Trace export as settings and the status bar show it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, Type)]
pub struct TelemetryStatus {
    /// The OTLP endpoint spans go to; none when export is off.
    pub exporting_to: Option<String>,
    pub spans_sent: u32,
    /// The last failed export (until one succeeds): a warning, never a turn's error.
    pub last_error: Option<String>,
    /// Why export is off although it was asked for (a header's variable not set…).
    pub problem: Option<String>,
}

struct CurrentConfig {
    version: Option<Version>,
    warnings: Vec<Problem>,
    error: Option<AppError>,
}

impl AppState {
    /// Loads (or creates) the config at `config_path` and starts watching it;
    /// `on_change` is told about every reload.
    pub fn open(
        config_path: PathBuf,
        data_dir: PathBuf,
        on_change: impl Fn(ConfigChanged) + Send + Sync + 'static,
        emit_outside: mcp::Emitter,
    ) -> Result<AppState, AppError> {
        // Only the default location is created on a first start; a path the user
        // named that does not exist is shown as an error, and nothing is created.
        let on_change: Arc<dyn Fn(ConfigChanged) + Send + Sync> = Arc::new(on_change);
        let mut first_start = false;
        let (initial, error) = match store::load_on_first_start(&config_path) {
            Ok((loaded, created)) => {
                first_start = created;
                (loaded, None)
            }
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
        let mcp_server: Arc<Mutex<Option<McpServer>>> = Arc::default();
        let watch_mcp = mcp_server.clone();
        let watch_on_change = on_change.clone();
        let watch = watch::spawn(&config_path, &initial, move |reload| {
            let changed = match reload {
                Reload::Applied { loaded, changed_agents } => {
                    adopt(&watch_dispatcher, &watch_current, &watch_mcp, &loaded, &changed_agents);
                    ConfigChanged { version: Some(loaded.version.0.clone()), changed_agents, error: None }
                }
                Reload::Rejected { error } => {
                    let error = AppError::from(error);
                    watch_current.lock().unwrap().error = Some(error.clone());
                    ConfigChanged { version: None, changed_agents: vec![], error: Some(error) }
                }
            };
            watch_on_change(changed);
        });
        let watch = match watch {
            Ok(watch) => Some(watch),
            Err(error) => {
                tracing::warn!(%error, "config hot reload is off");
                None
            }
        };
        let sessions = Arc::new(ChatSessions::open(data_dir.join("sessions"))?);
        let preferences = PreferencesFile::new(&data_dir);
        let (telemetry, telemetry_problem) = match Telemetry::from_config(&initial.config) {
            Ok(telemetry) => (telemetry.map(Arc::new), None),
            Err(problem) => (None, Some(problem)),
        };
        Ok(AppState {
            config_path,
            dispatcher,
            current,
            _watch: watch,
            on_change,
            first_start: std::sync::atomic::AtomicBool::new(first_start),
            sessions,
            preferences,
            data_dir,
            mcp: tokio::sync::Mutex::new(None),
            mcp_server,
            emit_outside,
            telemetry,
            telemetry_problem,
        })
    }

    /// Puts a version this process wrote in force (the watcher's reload does the
    /// same for outside edits).
    fn adopt(&self, loaded: Loaded, evict: &[String]) {
        adopt(&self.dispatcher, &self.current, &self.mcp_server, &loaded, evict);
        self.first_start.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    fn config_state(&self) -> ConfigState {
        let current = self.current.lock().unwrap();
        ConfigState {
            path: self.config_path.display().to_string(),
            version: current.version.as_ref().map(|version| version.0.clone()),
            config: (*self.dispatcher.config()).clone(),
            warnings: current.warnings.clone(),
            error: current.error.clone(),
            first_start: self.first_start.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Switches the built-in MCP endpoint on (on `port`) or off.
    async fn switch_mcp(&self, enabled: bool, port: u16) -> McpServerStatus {
        let mut running = self.mcp.lock().await;
        if let Some(previous) = running.take() {
            previous.stop().await;
            *self.mcp_server.lock().unwrap() = None;
        }
        if !enabled {
            return McpServerStatus::default();
        }
        let shared = mcp::Shared {
            emit: self.emit_outside.clone(),
            dispatcher: self.dispatcher.clone(),
            sessions: self.sessions.clone(),
            telemetry: self.telemetry.clone(),
        };
        let started = mcp::start(shared, port).await;
        match started {
            Ok(endpoint) => {
                let status = endpoint.status();
                *self.mcp_server.lock().unwrap() = Some(endpoint.server.clone());
                *running = Some(endpoint);
                status
            }
            Err(error) => McpServerStatus { error: Some(error), ..McpServerStatus::default() },
        }
    }
}

#[tauri::command]
#[specta::specta]
fn get_config_state(state: State<'_, AppState>) -> ConfigState {
    state.config_state()
}

/// A new valid config in force: the dispatcher (its runners evicted), the state the
/// UI reads, and the MCP endpoint's clients told that the tool list changed.
fn adopt(
    dispatcher: &Dispatcher,
    current: &Mutex<CurrentConfig>,
    mcp_server: &Mutex<Option<McpServer>>,
    loaded: &Loaded,
    evict: &[String],
) {
    dispatcher.replace_config(loaded.config.clone(), evict);
    if let Some(server) = mcp_server.lock().unwrap().clone() {
        tauri::async_runtime::spawn(async move { server.config_changed().await });
    }
    let mut current = current.lock().unwrap();
    current.version = Some(loaded.version.clone());
    current.warnings = loaded.warnings.clone();
    current.error = None;
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

/// Runs one user turn in its session; every event of its call tree goes through
/// `on_event`, after it is in the session's log.
#[tauri::command]
#[specta::specta]
async fn send_message(
    state: State<'_, AppState>,
    request: SendRequest,
    on_event: Channel<CallEvent>,
) -> Result<TurnOutcome, AppError> {
    let turn = SessionTurn {
        session_id: request.session_id,
        turn_id: request.turn_id,
        agent: request.agent,
        message: request.message,
    };
    let recorder = state
        .telemetry
        .as_ref()
        .map(|telemetry| telemetry.turn(&state.dispatcher.config(), Some(turn.session_id.clone())));
    let show = move |event: CallEvent| {
        if let Some(recorder) = &recorder {
            recorder.record(&event);
        }
        drop(on_event.send(event));
    };
    Ok(state.sessions.run_turn(&state.dispatcher, turn, ApprovalPolicy::Ask, show).await?)
}

/// The chat sessions, most recently used first.
#[tauri::command]
#[specta::specta]
fn list_sessions(state: State<'_, AppState>) -> Result<Vec<SessionSummary>, AppError> {
    Ok(state.sessions.list()?)
}

/// Starts a chat session.
#[tauri::command]
#[specta::specta]
fn create_session(state: State<'_, AppState>, title: String) -> Result<SessionSummary, AppError> {
    Ok(state.sessions.create(&title)?)
}

#[tauri::command]
#[specta::specta]
fn rename_session(state: State<'_, AppState>, id: String, title: String) -> Result<(), AppError> {
    Ok(state.sessions.rename(&id, &title)?)
}

#[tauri::command]
#[specta::specta]
fn delete_session(state: State<'_, AppState>, id: String) -> Result<(), AppError> {
    Ok(state.sessions.delete(&id)?)
}

/// A session's log: its messages, every event of every turn, retractions.
#[tauri::command]
#[specta::specta]
fn load_session(state: State<'_, AppState>, id: String) -> Result<SessionLog, AppError> {
    Ok(state.sessions.load(&id)?)
}

/// Takes a turn back (retry, edit and resend): it stays in the log, marked.
#[tauri::command]
#[specta::specta]
fn retract_turn(state: State<'_, AppState>, session_id: String, turn_id: String) -> Result<(), AppError> {
    Ok(state.sessions.retract_turn(&session_id, &turn_id)?)
}

/// Writes a turn's call-tree events as a JSON array into the app's `exports`
/// folder and returns the file's path.
#[tauri::command]
#[specta::specta]
fn export_turn(state: State<'_, AppState>, session_id: String, turn_id: String) -> Result<String, AppError> {
    let folder = state.data_dir.join("exports");
    Ok(state.sessions.export_turn(&session_id, &turn_id, &folder)?.display().to_string())
}

/// The window's preferences (theme, panel width, last session).
#[tauri::command]
#[specta::specta]
fn get_preferences(state: State<'_, AppState>) -> Preferences {
    state.preferences.read()
}

/// Sets the preferences `change` names; the others stay as they are.
#[tauri::command]
#[specta::specta]
fn set_preferences(state: State<'_, AppState>, change: Preferences) -> Result<Preferences, AppError> {
    Ok(state.preferences.update(change)?)
}

/// Cancels a running turn; false when it is not running.
#[tauri::command]
#[specta::specta]
fn cancel_turn(state: State<'_, AppState>, turn_id: String) -> bool {
    state.sessions.cancel_turn(&turn_id)
}

/// Answers the approval request of a waiting call; false when none is waiting.
#[tauri::command]
#[specta::specta]
fn resolve_approval(state: State<'_, AppState>, turn_id: String, call_id: String, decision: ApprovalDecision) -> bool {
    state.sessions.resolve_approval(&turn_id, &call_id, decision)
}

/// Answers the question a remote agent asked in a running turn (`None` declines).
#[tauri::command]
#[specta::specta]
fn answer_input(state: State<'_, AppState>, turn_id: String, call_id: String, answer: Option<String>) -> bool {
    state.sessions.answer_input(&turn_id, &call_id, answer)
}

/// Cancels one call of a running turn with its subtree; its parent continues.
#[tauri::command]
#[specta::specta]
fn cancel_call(state: State<'_, AppState>, turn_id: String, call_id: String) -> bool {
    state.sessions.cancel_call(&turn_id, &call_id)
}

/// The built-in MCP endpoint: running or not, its address and a client config.
#[tauri::command]
#[specta::specta]
async fn get_mcp_server(state: State<'_, AppState>) -> Result<McpServerStatus, AppError> {
    Ok(state.mcp.lock().await.as_ref().map(mcp::Running::status).unwrap_or_default())
}

/// Switches the built-in MCP endpoint on (on `port`, else the one used last, else
/// 8765; 0 picks a free one) or off, and remembers it for the next start.
#[tauri::command]
#[specta::specta]
async fn set_mcp_server(
    state: State<'_, AppState>,
    enabled: bool,
    port: Option<u16>,
) -> Result<McpServerStatus, AppError> {
    let port = port.or(state.preferences.read().mcp_port).unwrap_or(mcp::DEFAULT_PORT);
    let status = state.switch_mcp(enabled, port).await;
    let change = Preferences { mcp_server: Some(enabled), mcp_port: Some(port), ..Preferences::default() };
    state.preferences.update(change)?;
    Ok(status)
}

/// Where traces go and how that has gone.
#[tauri::command]
#[specta::specta]
fn get_telemetry_status(state: State<'_, AppState>) -> TelemetryStatus {
    match &state.telemetry {
        Some(telemetry) => {
            let health = telemetry.health();
            TelemetryStatus {
                exporting_to: Some(telemetry.endpoint().to_string()),
                spans_sent: u32::try_from(health.spans_sent).unwrap_or(u32::MAX),
                last_error: health.last_error,
                problem: None,
            }
        }
        None => TelemetryStatus { problem: state.telemetry_problem.clone(), ..TelemetryStatus::default() },
    }
}

/// The commands and events the UI may use, with their TypeScript bindings.
pub fn specta_builder<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(tauri_specta::collect_commands![
            get_config_state,
            list_tools,
            send_message,
            cancel_turn,
            cancel_call,
            resolve_approval,
            list_sessions,
            create_session,
            rename_session,
            delete_session,
            load_session,
            retract_turn,
            export_turn,
            get_preferences,
            set_preferences,
            get_mcp_server,
            set_mcp_server,
            get_telemetry_status,
            answer_input,
            config_forms::edit_config,
            config_forms::read_config_file,
            config_forms::explain_tools,
            config_forms::test_connection,
            config_forms::discover_setup
        ])
        .events(tauri_specta::collect_events![ConfigChanged, OutsideCall])
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
pub fn configure<R: Runtime>(
    builder: tauri::Builder<R>,
    config_path: PathBuf,
    data_dir: Option<PathBuf>,
) -> tauri::Builder<R> {
    let specta = specta_builder::<R>();
    builder
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(desktop::window_state())
        .plugin(desktop::window_state_autosave())
        .plugin(links::navigation_guard())
        .invoke_handler(specta.invoke_handler())
        .setup(move |app| {
            specta.mount_events(app);
            desktop::focus_on_notification_click(app.handle());
            desktop::exit_on_ending_signals(app.handle());
            let handle = app.handle().clone();
            let from_environment = std::env::var_os(DATA_DIR_ENV).filter(|value| !value.is_empty()).map(PathBuf::from);
            let data_dir = match data_dir.clone().or(from_environment) {
                Some(folder) => folder,
                None => app.path().app_data_dir()?,
            };
            let outside_handle = handle.clone();
            let emit_outside: mcp::Emitter = Arc::new(move |update: OutsideCall| {
                if let Err(error) = update.emit(&outside_handle) {
                    tracing::warn!(%error, "could not tell the window about an MCP call");
                }
            });
            let on_change = move |changed: ConfigChanged| {
                if let Err(error) = changed.emit(&handle) {
                    tracing::warn!(%error, "could not tell the window about a config change");
                }
            };
            let state = AppState::open(config_path.clone(), data_dir, on_change, emit_outside)
                .map_err(|error| error.message)?;
            let preferences = state.preferences.read();
            app.manage(state);
            if preferences.mcp_server == Some(true) {
                // Switched on when the app last ran: on again, on the same port.
                let handle = app.handle().clone();
                let port = preferences.mcp_port.unwrap_or(mcp::DEFAULT_PORT);
                tauri::async_runtime::spawn(async move {
                    let state = handle.state::<AppState>();
                    let status = state.switch_mcp(true, port).await;
                    if let Some(error) = status.error {
                        tracing::warn!(%error, "the built-in MCP endpoint could not start");
                    }
                });
            }
            Ok(())
        })
}

/// Starts the desktop app on the config that `--config`, `$SWITCHBOARD_CONFIG` or
/// the platform config dir names.
pub fn run() {
    // First: whatever happens to this process later, even SIGKILL, its agents end with it.
    switchboard_core::runner::subprocess::start_reaper();
    let drawing = desktop::choose_drawing_mode();
    // Diagnostics only (every failure a user meets is reported in words): warnings
    // and up, without the MCP SDK's own lines, which quote what servers send
    // (`RUST_LOG=rmcp=debug` shows them); colour only on a terminal.
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let mut arguments = std::env::args().skip(1);
    let mut explicit = None;
    while let Some(argument) = arguments.next() {
        if argument == "--config" {
            explicit = arguments.next().map(PathBuf::from);
        }
    }
    let config_path = store::resolve_path(explicit.as_deref());
    tracing::debug!(?drawing, "how the window draws");
    let app = configure(tauri::Builder::default(), config_path, None)
        .build(tauri::generate_context!())
        .expect("the Switchboard window could not start");
    app.run(|app, event| {
        if let tauri::RunEvent::Exit = event {
            // Every agent and kept MCP stdio server still running is ended, and one
            // that ignores SIGTERM gets its SIGKILL, before the app exits.
            switchboard_core::runner::subprocess::end_every_group();
            // The last turns' spans are sent before the app exits.
            if let Some(telemetry) = app.try_state::<AppState>().and_then(|state| state.telemetry.clone()) {
                if let Err(error) = telemetry.shutdown() {
                    tracing::warn!(%error, "the last traces could not be sent");
                }
            }
        }
    });
}

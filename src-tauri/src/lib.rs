//! The desktop shell: the builder that puts the app together (plugins, the
//! commands and events the window may use, the app state) and `run`. No engine
//! logic lives here: the commands (`commands/`) are one line of glue over the
//! core each, the state (`state.rs`) holds the core's live config and sessions,
//! errors have one shape (`error.rs`), and calls that come in through the
//! built-in MCP endpoint reach the window through `mcp.rs`.

mod commands;
mod desktop;
mod error;
mod links;
mod mcp;
mod prefs;
mod state;

use std::path::PathBuf;
use std::sync::Arc;

use switchboard_core::config::store;
use switchboard_core::sessions::DATA_DIR_ENV;
use tauri::{Manager, Runtime};
use tauri_plugin_store::StoreExt;
use tauri_specta::Event;

pub use error::{AppError, AppErrorKind};
pub use mcp::{McpServerStatus, OutsideCall};
pub use prefs::{Preferences, Theme};
pub use state::{AppState, ConfigChanged, ConfigState, TelemetryStatus};

/// The commands and events the UI may use, with their TypeScript bindings.
pub fn specta_builder<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(tauri_specta::collect_commands![
            commands::config::get_config_state,
            commands::config::list_tools,
            commands::chat::send_message,
            commands::chat::cancel_turn,
            commands::chat::cancel_call,
            commands::chat::steer_call,
            commands::chat::resolve_approval,
            commands::chat::list_sessions,
            commands::chat::delegation_report,
            commands::chat::rerun_call,
            commands::chat::create_session,
            commands::chat::rename_session,
            commands::chat::delete_session,
            commands::chat::load_session,
            commands::chat::resume_turn,
            commands::chat::retract_turn,
            commands::chat::export_turn,
            commands::app::get_preferences,
            commands::app::set_preferences,
            commands::app::get_mcp_server,
            commands::app::set_mcp_server,
            commands::app::rotate_mcp_token,
            commands::app::get_telemetry_status,
            commands::chat::answer_input,
            commands::config::edit_config,
            commands::config::read_config_file,
            commands::config::explain_tools,
            commands::config::test_connection,
            commands::config::store_api_key,
            commands::config::api_key_stored,
            commands::config::delete_api_key,
            commands::config::agent_health,
            commands::export::export_session_markdown,
            commands::chat::log_command_note,
            commands::config::discover_setup
        ])
        .events(tauri_specta::collect_events![ConfigChanged, OutsideCall])
        // The provider table, as the core has it: the window keeps none of its own.
        .typ::<switchboard_core::config::ProviderInfo>()
        .constant("PROVIDERS", &switchboard_core::config::PROVIDERS)
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
        .plugin(tauri_plugin_store::Builder::default().build())
        .plugin(tauri_plugin_dialog::init())
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
            // The preferences' store is the plugin's, at an absolute path in the data
            // folder; auto-save is off because each change is saved as it is made.
            let store = app.store_builder(data_dir.join("prefs.json")).disable_auto_save().build()?;
            let preferences = prefs::PreferencesFile::new(store);
            let state = AppState::open(config_path.clone(), data_dir, preferences, on_change, emit_outside)
                .map_err(|error| error.message)?;
            let preferences = state.preferences.read();
            let _ = state.save_dialog.set(commands::export::save_dialog(app.handle().clone()));
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
            if let Some(state) = app.try_state::<AppState>() {
                state.exit();
            }
        }
    });
}

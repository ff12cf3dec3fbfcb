//! The config commands: the config in force and its tool-agent lists, and the
//! forms, the setup wizard and the chat's slash commands behind them. Each edit is
//! one of the core's `Edit`s, applied by the live config with its validation,
//! stale-copy check and atomic write; the explanations, the connection test and
//! the local discovery are the core's too.

use switchboard_core::config::edit::Edit;
use switchboard_core::config::store::{self, Version};
use switchboard_core::config::{global_tools, merged_tools, AgentConfig, ResolvedTool};
use switchboard_core::setup::connection::{self, ConnectionReport};
use switchboard_core::setup::{self, SetupDiscovery};
use switchboard_core::tools::explain::{self, ToolsExplained};
use tauri::State;

use crate::error::{AppError, AppErrorKind};
use crate::state::{AppState, ConfigState};

/// The config in force, its version and warnings, and why the file is not in
/// force if it is not.
#[tauri::command]
#[specta::specta]
pub(crate) fn get_config_state(state: State<'_, AppState>) -> ConfigState {
    state.config_state()
}

/// The merged tool-agent list of an agent (disabled entries included), or the
/// global entries as written when `agent` is absent.
#[tauri::command]
#[specta::specta]
pub(crate) fn list_tools(state: State<'_, AppState>, agent: Option<String>) -> Vec<ResolvedTool> {
    let config = state.live.dispatcher().config();
    match agent {
        Some(agent) => merged_tools(&config, &agent),
        None => global_tools(&config),
    }
}

/// Applies one edit made against the file's `expected_version`. A file changed
/// on disk since is a `config_conflict` (nothing written): read it with
/// `read_config_file`, then apply again against its version or take it.
#[tauri::command]
#[specta::specta]
pub(crate) fn edit_config(
    state: State<'_, AppState>,
    expected_version: String,
    edit: Edit,
) -> Result<ConfigState, AppError> {
    Ok(ConfigState::from(state.live.apply(&Version(expected_version), &edit)?))
}

/// The file as it is on disk now (which may not be in force yet, or at all).
#[tauri::command]
#[specta::specta]
pub(crate) fn read_config_file(state: State<'_, AppState>) -> Result<ConfigState, AppError> {
    let loaded = store::load(state.live.path())?;
    Ok(ConfigState {
        path: state.live.path().display().to_string(),
        version: Some(loaded.version.0),
        config: loaded.config,
        warnings: loaded.warnings,
        error: None,
        first_start: false,
    })
}

/// Every entry that could reach `agent`'s tool-agent list, why each absent one is
/// absent, and the function definitions it is offered.
#[tauri::command]
#[specta::specta]
pub(crate) fn explain_tools(state: State<'_, AppState>, agent: String) -> Result<ToolsExplained, AppError> {
    let config = state.live.dispatcher().config();
    explain::explain(&config, &agent)
        .ok_or_else(|| AppError::new(AppErrorKind::NotFound, format!("no agent named {agent:?} is configured")))
}

/// Tests an agent as the form holds it (saved or not).
#[tauri::command]
#[specta::specta]
pub(crate) async fn test_connection(agent: AgentConfig) -> Result<ConnectionReport, AppError> {
    Ok(connection::test_connection(&agent, std::env::var_os("PATH")).await)
}

/// The local servers and command-line agents the setup wizard offers.
#[tauri::command]
#[specta::specta]
pub(crate) async fn discover_setup() -> Result<SetupDiscovery, AppError> {
    let listed = std::env::var(setup::LOCAL_SERVERS_ENV).ok();
    Ok(setup::discover(&setup::candidates(listed.as_deref()), std::env::var_os("PATH")).await)
}

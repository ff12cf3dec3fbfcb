//! The config commands: the config in force and its tool-agent lists, and the
//! forms, the setup wizard and the chat's slash commands behind them. Each edit is
//! one of the core's `Edit`s, applied by the live config with its validation,
//! stale-copy check and atomic write; the explanations, the connection test and
//! the local discovery are the core's too.

use switchboard_core::config::edit::Edit;
use switchboard_core::config::store::{self, Version};
use switchboard_core::config::{global_tools, merged_tools, AgentConfig, ResolvedTool};
use switchboard_core::keys::KeyError;
use switchboard_core::setup::connection::{self, ConnectionReport};
use switchboard_core::setup::health::{self, AgentHealth};
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
        approvals: loaded.config.effective_approvals(),
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

/// Tests an agent as the form holds it (saved or not); its `api_key_keyring`
/// key is read from the keyring the runners read.
#[tauri::command]
#[specta::specta]
pub(crate) async fn test_connection(
    state: State<'_, AppState>,
    agent: AgentConfig,
) -> Result<ConnectionReport, AppError> {
    let keys = state.live.dispatcher().runners().registry().keys().clone();
    Ok(connection::test_connection_with_keys(&agent, std::env::var_os("PATH"), &keys).await)
}

/// Whether each agent of the config in force could answer now, checked without a
/// model call: its server lists its models, its program is on PATH, its card is read.
#[tauri::command]
#[specta::specta]
pub(crate) async fn agent_health(state: State<'_, AppState>) -> Result<Vec<AgentHealth>, AppError> {
    let dispatcher = state.live.dispatcher();
    let keys = dispatcher.runners().registry().keys().clone();
    let agents = dispatcher.config().agents.clone();
    Ok(health::check_all(&agents, std::env::var_os("PATH"), &keys).await)
}

fn keyring_error(error: KeyError) -> AppError {
    AppError::new(AppErrorKind::Keyring, error.to_string())
}

/// Stores `key` in the system keyring as `entry` (an HTTP agent's
/// `api_key_keyring`). The key goes no further: not into the config, a log or an
/// event; the form saves the entry's name with the agent.
#[tauri::command]
#[specta::specta]
pub(crate) async fn store_api_key(state: State<'_, AppState>, entry: String, key: String) -> Result<(), AppError> {
    let keys = state.live.dispatcher().runners().registry().keys().clone();
    tokio::task::spawn_blocking(move || keys.set(&entry, &key))
        .await
        .map_err(|_| AppError::new(AppErrorKind::Keyring, "the keyring write stopped".into()))?
        .map_err(keyring_error)
}

/// Whether the system keyring holds a key for `entry` (never the key itself).
#[tauri::command]
#[specta::specta]
pub(crate) async fn api_key_stored(state: State<'_, AppState>, entry: String) -> Result<bool, AppError> {
    let keys = state.live.dispatcher().runners().registry().keys().clone();
    Ok(switchboard_core::keys::read(&keys, &entry).await.map_err(keyring_error)?.is_some())
}

/// Deletes the key stored for `entry`; whether there was one.
#[tauri::command]
#[specta::specta]
pub(crate) async fn delete_api_key(state: State<'_, AppState>, entry: String) -> Result<bool, AppError> {
    let keys = state.live.dispatcher().runners().registry().keys().clone();
    tokio::task::spawn_blocking(move || keys.delete(&entry))
        .await
        .map_err(|_| AppError::new(AppErrorKind::Keyring, "the keyring delete stopped".into()))?
        .map_err(keyring_error)
}

/// The local servers and command-line agents the setup wizard offers.
#[tauri::command]
#[specta::specta]
pub(crate) async fn discover_setup() -> Result<SetupDiscovery, AppError> {
    let listed = std::env::var(setup::LOCAL_SERVERS_ENV).ok();
    Ok(setup::discover(&setup::candidates(listed.as_deref()), std::env::var_os("PATH")).await)
}

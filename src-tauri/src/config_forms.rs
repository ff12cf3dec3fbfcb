//! The commands behind the configuration forms, the setup wizard and the chat's
//! slash commands: each edit is one of the core's `Edit`s, applied with its
//! validation, stale-copy check and atomic write (`config::edit::apply`); the
//! explanations, the connection test and the local discovery are the core's too.

use switchboard_core::config::edit::{self, Edit, EditError};
use switchboard_core::config::store::{self, Version};
use switchboard_core::config::AgentConfig;
use switchboard_core::setup::connection::{self, ConnectionReport};
use switchboard_core::setup::{self, SetupDiscovery};
use switchboard_core::tools::explain::{self, ToolsExplained};
use tauri::State;

use crate::{AppError, AppErrorKind, AppState, ConfigChanged, ConfigState};

impl From<EditError> for AppError {
    fn from(error: EditError) -> AppError {
        match error {
            EditError::Config(error) => AppError::from(error),
            EditError::NotFound(message) | EditError::AlreadyExists(message) | EditError::Refused(message) => {
                AppError::new(AppErrorKind::EditRefused, message)
            }
        }
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
    let applied = edit::apply(&state.config_path, &Version(expected_version), &edit)?;
    if let Some(watch) = &state._watch {
        watch.note_saved(&applied.loaded);
    }
    state.adopt(applied.loaded.clone(), &applied.evict);
    (state.on_change)(ConfigChanged {
        version: Some(applied.loaded.version.0.clone()),
        changed_agents: applied.evict,
        error: None,
    });
    Ok(state.config_state())
}

/// The file as it is on disk now (which may not be in force yet, or at all).
#[tauri::command]
#[specta::specta]
pub(crate) fn read_config_file(state: State<'_, AppState>) -> Result<ConfigState, AppError> {
    let loaded = store::load(&state.config_path)?;
    Ok(ConfigState {
        path: state.config_path.display().to_string(),
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
    let config = state.dispatcher.config();
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

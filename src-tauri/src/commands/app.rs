//! The app's own commands: the window's preferences, the built-in MCP endpoint's
//! switch, and where traces go.

use tauri::State;

use crate::error::AppError;
use crate::mcp::{self, McpServerStatus};
use crate::prefs::Preferences;
use crate::state::{AppState, TelemetryStatus};

/// The window's preferences (theme, panel width, last session).
#[tauri::command]
#[specta::specta]
pub(crate) fn get_preferences(state: State<'_, AppState>) -> Preferences {
    state.preferences.read()
}

/// Sets the preferences `change` names; the others stay as they are.
#[tauri::command]
#[specta::specta]
pub(crate) fn set_preferences(state: State<'_, AppState>, change: Preferences) -> Result<Preferences, AppError> {
    state.preferences.update(change)
}

/// The built-in MCP endpoint: running or not, its address and a client config.
#[tauri::command]
#[specta::specta]
pub(crate) async fn get_mcp_server(state: State<'_, AppState>) -> Result<McpServerStatus, AppError> {
    Ok(state.mcp_status().await)
}

/// Switches the built-in MCP endpoint on (on `port`, else the one used last, else
/// 8765; 0 picks a free one) or off, and remembers it for the next start.
#[tauri::command]
#[specta::specta]
pub(crate) async fn set_mcp_server(
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

/// A new bearer token for the built-in MCP endpoint, shown once in the answer;
/// the old one stops working at once.
#[tauri::command]
#[specta::specta]
pub(crate) async fn rotate_mcp_token(state: State<'_, AppState>) -> Result<McpServerStatus, AppError> {
    Ok(state.rotate_mcp_token().await)
}

/// Where traces go and how that has gone.
#[tauri::command]
#[specta::specta]
pub(crate) fn get_telemetry_status(state: State<'_, AppState>) -> TelemetryStatus {
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

//! Declares the app's own commands so that each needs a permission: the window's
//! capability then grants exactly the commands the UI uses.
fn main() {
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(&[
        "get_config_state",
        "list_tools",
        "send_message",
        "cancel_turn",
        "cancel_call",
        "resolve_approval",
        "list_sessions",
        "delegation_report",
        "rerun_call",
        "create_session",
        "rename_session",
        "delete_session",
        "load_session",
        "retract_turn",
        "export_turn",
        "get_preferences",
        "set_preferences",
        "get_mcp_server",
        "set_mcp_server",
        "get_telemetry_status",
        "answer_input",
        "edit_config",
        "read_config_file",
        "explain_tools",
        "test_connection",
        "store_api_key",
        "api_key_stored",
        "delete_api_key",
        "agent_health",
        "export_session_markdown",
        "log_command_note",
        "discover_setup",
    ])))
    .expect("tauri build script");
}

//! What a desktop app is expected to do that the engine knows nothing of: the
//! window comes back where and as large as the user left it (tauri-plugin-window-state,
//! Rust only: the window calls none of its commands), and desktop notifications
//! (tauri-plugin-notification; the UI sends them when a call starts waiting while the
//! window is in the background) bring the window forward when clicked. Which call a
//! notification was about is the UI's business: it hears the same click and selects it.

use tauri::{Manager, Runtime};
use tauri_plugin_notification::NotificationExt;
use tauri_plugin_window_state::StateFlags;

/// The window's size, place, and maximized or full-screen state, saved when the app
/// exits and restored when the window opens.
pub fn window_state<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_window_state::Builder::default()
        .with_state_flags(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED | StateFlags::FULLSCREEN)
        .build()
}

/// A click on one of the app's notifications brings the main window forward (the
/// notification server reports it as the action `tap`). Raising it from Rust means
/// the window needs no permission to focus itself.
pub fn focus_on_notification_click<R: Runtime>(app: &tauri::AppHandle<R>) {
    let handle = app.clone();
    let registered = app.notification().on_action(move |performed| {
        if performed.action_id() != "tap" {
            return;
        }
        let Some(window) = handle.get_webview_window("main") else { return };
        // Each can fail on a window manager that refuses; the others are still worth trying.
        let _ = window.unminimize();
        let _ = window.show();
        if let Err(error) = window.set_focus() {
            tracing::warn!(%error, "a clicked notification could not bring the window forward");
        }
    });
    if let Err(error) = registered {
        tracing::warn!(%error, "notification clicks will not bring the window forward");
    }
}

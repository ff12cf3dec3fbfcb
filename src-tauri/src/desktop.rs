//! What a desktop app is expected to do that the engine knows nothing of: the
//! window comes back where and as large as the user left it (tauri-plugin-window-state,
//! Rust only: the window calls none of its commands; saved at exit and once a move
//! or resize settles), and desktop notifications
//! (tauri-plugin-notification; the UI sends them when a call starts waiting while the
//! window is in the background) bring the window forward when clicked. Which call a
//! notification was about is the UI's business: it hears the same click and selects it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Manager, Runtime, WindowEvent};
use tauri_plugin_notification::NotificationExt;
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// What of the window is kept: its size, place, and maximized or full-screen state.
const KEPT: StateFlags =
    StateFlags::SIZE.union(StateFlags::POSITION).union(StateFlags::MAXIMIZED).union(StateFlags::FULLSCREEN);

/// How long the window must stay still before its state is written.
const SETTLE: Duration = Duration::from_millis(500);

/// The window's state, restored when it opens and saved when the app exits.
pub fn window_state<R: Runtime>() -> TauriPlugin<R> {
    tauri_plugin_window_state::Builder::default().with_state_flags(KEPT).build()
}

/// Also saves the window's state once a move or resize has settled, so an app that
/// is killed (a crash, a logout, a test harness) still opens where it was left.
pub fn window_state_autosave<R: Runtime>() -> TauriPlugin<R> {
    Builder::new("window-state-autosave")
        .on_window_ready(|window| {
            let changes = Arc::new(AtomicU64::new(0));
            let app = window.app_handle().clone();
            window.on_window_event(move |event| {
                if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
                    return;
                }
                let change = changes.fetch_add(1, Ordering::SeqCst) + 1;
                let (changes, app) = (changes.clone(), app.clone());
                tauri::async_runtime::spawn(async move {
                    tokio::time::sleep(SETTLE).await;
                    if changes.load(Ordering::SeqCst) == change {
                        if let Err(error) = app.save_window_state(KEPT) {
                            tracing::warn!(%error, "the window's size and place could not be saved");
                        }
                    }
                });
            });
        })
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

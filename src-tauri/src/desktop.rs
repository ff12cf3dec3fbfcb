//! What a desktop app is expected to do that the engine knows nothing of: the
//! window comes back where and as large as the user left it (tauri-plugin-window-state,
//! Rust only: the window calls none of its commands; saved at exit and once a move
//! or resize settles), and desktop notifications
//! (tauri-plugin-notification; the UI sends them when a call starts waiting while the
//! window is in the background) bring the window forward when clicked. Which call a
//! notification was about is the UI's business: it hears the same click and selects it.
//! On Linux, WebKitGTK draws without accelerated compositing unless the user asks for
//! it ([`drawing_mode`]): measured with `make bench-memory`, its layer buffers were
//! about 100 MiB of the window's growth over a long session.

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

/// SIGTERM, SIGHUP and SIGINT (a logout, `kill`, Ctrl-C in the terminal that started
/// it) end the app as closing its window does, through `RunEvent::Exit`, so its
/// agents and kept MCP servers are ended too instead of outliving it.
pub fn exit_on_ending_signals<R: Runtime>(app: &tauri::AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        match switchboard_core::runner::ending_signal().await {
            Some(_) => app.exit(0),
            None => tracing::warn!("the app cannot listen for SIGTERM: its agents may outlive a kill"),
        }
    });
}

/// The variable that keeps WebKitGTK's accelerated compositing on: `SWITCHBOARD_COMPOSITING=on`.
pub const COMPOSITING_ENV: &str = "SWITCHBOARD_COMPOSITING";

/// WebKitGTK's own switch, read when a web view is made (and inherited by its web process).
pub const WEBKIT_NO_COMPOSITING_ENV: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// What [`drawing_mode`] decided, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawingMode {
    /// WebKit paints without accelerated compositing: the app's default.
    NoCompositing,
    /// The user asked for WebKit's accelerated compositing (`SWITCHBOARD_COMPOSITING=on`).
    Compositing,
    /// `WEBKIT_DISABLE_COMPOSITING_MODE` was already set by the user: theirs is kept.
    UsersOwn,
}

/// How the window draws, from the two variables as they are: WebKit's own switch when
/// the user set it, accelerated compositing when `SWITCHBOARD_COMPOSITING` is `on`
/// (or `1`, `true`), and otherwise none. The shell sets WebKit's switch for
/// [`DrawingMode::NoCompositing`] before the window exists.
pub fn drawing_mode(compositing: Option<&str>, webkit_switch: Option<&str>) -> DrawingMode {
    if webkit_switch.is_some() {
        return DrawingMode::UsersOwn;
    }
    match compositing.map(|value| value.trim().to_ascii_lowercase()) {
        Some(value) if matches!(value.as_str(), "on" | "1" | "true" | "yes") => DrawingMode::Compositing,
        _ => DrawingMode::NoCompositing,
    }
}

/// Applies [`drawing_mode`] to this process's environment; called first thing, before
/// any thread or web view exists. Only WebKitGTK (Linux) reads the switch.
pub fn choose_drawing_mode() -> DrawingMode {
    let compositing = std::env::var(COMPOSITING_ENV).ok();
    let webkit_switch = std::env::var(WEBKIT_NO_COMPOSITING_ENV).ok();
    let mode = drawing_mode(compositing.as_deref(), webkit_switch.as_deref());
    if cfg!(target_os = "linux") && mode == DrawingMode::NoCompositing {
        std::env::set_var(WEBKIT_NO_COMPOSITING_ENV, "1");
        SWITCHED_BY_US.store(true, Ordering::SeqCst);
    }
    mode
}

/// Whether `WEBKIT_DISABLE_COMPOSITING_MODE` is the app's doing, not the user's.
static SWITCHED_BY_US: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps the app's own WebKit switch out of a program it starts for the user (a link
/// opener): a WebKitGTK browser started that way draws as it would have.
pub fn without_our_switch(command: &mut std::process::Command) -> &mut std::process::Command {
    if SWITCHED_BY_US.load(Ordering::SeqCst) {
        command.env_remove(WEBKIT_NO_COMPOSITING_ENV);
    }
    command
}

#[cfg(test)]
mod tests {
    use super::{drawing_mode, DrawingMode};

    #[test]
    fn the_window_draws_without_compositing_unless_the_user_says_otherwise() {
        let cases = [
            (None, None, DrawingMode::NoCompositing),
            (Some(""), None, DrawingMode::NoCompositing),
            (Some("off"), None, DrawingMode::NoCompositing),
            (Some("on"), None, DrawingMode::Compositing),
            (Some(" ON "), None, DrawingMode::Compositing),
            (Some("1"), None, DrawingMode::Compositing),
            (Some("true"), None, DrawingMode::Compositing),
            (None, Some("0"), DrawingMode::UsersOwn),
            (Some("on"), Some("1"), DrawingMode::UsersOwn),
        ];
        for (compositing, webkit_switch, expected) in cases {
            assert_eq!(drawing_mode(compositing, webkit_switch), expected, "{compositing:?} {webkit_switch:?}");
        }
    }
}

//! Exports a person keeps: a session as Markdown (and a turn's events as JSON,
//! `chat::export_turn`), written where the user picks in the system's save dialog (opened from Rust: the window holds no dialog or file
//! permission, and names no path). The dialog suggests the session's title as the
//! file name, in the Documents folder; cancelling it writes nothing.

use std::path::PathBuf;
use std::sync::Arc;

use switchboard_core::sessions::{markdown, SessionRecord};
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use crate::error::{AppError, AppErrorKind};
use crate::state::AppState;

/// Writes session `session_id` as Markdown where the user picks; the path written,
/// or `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub(crate) async fn export_session_markdown(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<Option<String>, AppError> {
    let log = state.sessions.load(&session_id)?;
    let title = title_of(&log).unwrap_or(&session_id);
    let document = markdown::render(&log);
    save_as(&state, file_name(title, "md"), "Markdown", "md", document.as_bytes()).await
}

/// A session's title as its log last names it.
pub(crate) fn title_of(log: &switchboard_core::sessions::SessionLog) -> Option<&str> {
    log.records
        .iter()
        .filter_map(|record| match record {
            SessionRecord::Created { title, .. } | SessionRecord::Renamed { title } => Some(title.as_str()),
            _ => None,
        })
        .next_back()
}

/// Asks where to write `document` (suggesting `name`, a `kind` file) and writes it
/// there; the path written, or `None` when the dialog was cancelled.
pub(crate) async fn save_as(
    state: &AppState,
    name: String,
    kind: &'static str,
    extension: &'static str,
    document: &[u8],
) -> Result<Option<String>, AppError> {
    let Some(ask) = state.save_dialog.get() else {
        return Err(AppError::new(AppErrorKind::Io, "the save dialog is not ready yet".into()));
    };
    let (answer, answered) = tokio::sync::oneshot::channel();
    ask(SaveRequest { name, kind, extension }, answer);
    let Some(path) = answered.await.unwrap_or(None) else { return Ok(None) };
    std::fs::write(&path, document).map_err(|error| {
        AppError::new(AppErrorKind::Io, format!("{} could not be written: {error}", path.display()))
    })?;
    Ok(Some(path.display().to_string()))
}

/// What a save dialog is asked: the suggested file name, its kind and extension.
pub(crate) struct SaveRequest {
    pub name: String,
    pub kind: &'static str,
    pub extension: &'static str,
}

/// Opens the save dialog for a request and sends the path picked (`None`: cancelled).
pub(crate) type SaveDialog = Arc<dyn Fn(SaveRequest, tokio::sync::oneshot::Sender<Option<PathBuf>>) + Send + Sync>;

/// The system's save dialog of `app` (tauri-plugin-dialog, GTK on Linux), in the
/// Documents folder (home when there is none).
pub(crate) fn save_dialog<R: Runtime>(app: AppHandle<R>) -> SaveDialog {
    Arc::new(move |request: SaveRequest, answer: tokio::sync::oneshot::Sender<Option<PathBuf>>| {
        let mut dialog =
            app.dialog().file().set_title(format!("Export as {}", request.kind)).set_file_name(&request.name);
        dialog = dialog.add_filter(request.kind, &[request.extension]);
        if let Some(folder) = dirs_documents() {
            dialog = dialog.set_directory(folder);
        }
        dialog.save_file(move |picked| drop(answer.send(picked.and_then(|picked| picked.into_path().ok()))));
    })
}

fn dirs_documents() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let documents = home.join("Documents");
    Some(if documents.is_dir() { documents } else { home })
}

/// A turn's JSON file as a person names it: the session's title and the turn's
/// day (UTC), never the internal ids.
pub(crate) fn turn_file_name(title: &str, started_ms: Option<u64>) -> String {
    let title: String = title.chars().take(60).collect();
    match started_ms.map(switchboard_core::sessions::report::utc_day) {
        Some(day) => file_name(&format!("{} {day}", title.trim()), "json"),
        None => file_name(&title, "json"),
    }
}

/// A title as a file name with `extension`: path separators and control characters
/// out, 80 characters at most.
pub(crate) fn file_name(title: &str, extension: &str) -> String {
    let cleaned: String = title
        .chars()
        .map(|character| if character == '/' || character == '\\' || character.is_control() { '-' } else { character })
        .take(80)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.');
    format!("{}.{extension}", if cleaned.is_empty() { "session" } else { cleaned })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_turn_is_exported_under_its_sessions_title_and_day() {
        assert_eq!(
            super::turn_file_name("Otters / rivers", Some(1_764_892_800_000)),
            "Otters - rivers 2025-12-05.json"
        );
        assert_eq!(super::turn_file_name("", None), "session.json");
    }

    #[test]
    fn a_title_becomes_a_file_name_that_stays_in_its_folder() {
        assert_eq!(super::file_name("Otters / rivers", "md"), "Otters - rivers.md");
        assert_eq!(super::file_name("../../etc/passwd", "md"), "-..-etc-passwd.md");
        assert_eq!(super::file_name("   ", "md"), "session.md");
        assert_eq!(super::file_name(&"x".repeat(200), "md").len(), 83);
    }
}

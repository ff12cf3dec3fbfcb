//! The chat commands: a turn in its session and a call run again (each update
//! through its channel, after it is in the session's log), the sessions
//! themselves, and controlling a running turn (cancel it or a call, answer an
//! approval or a remote agent's question, send a message into a call). Turns,
//! approvals and exports are `ChatSessions`' work.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::sessions::interrupted::InterruptedTurn;
use switchboard_core::sessions::report::{day_start_ms, DelegationReport, ReportRange};
use switchboard_core::sessions::{Rerun, RerunOutcome, SessionLog, SessionSummary, SessionTurn, Show, TurnUpdate};
use switchboard_core::{ApprovalDecision, ApprovalPolicy, SteerRefusal, TurnOutcome};
use tauri::ipc::Channel;
use tauri::State;

use crate::error::{AppError, AppErrorKind};
use crate::state::AppState;

/// A user turn as the chat sends it; the history comes from the session's log.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct SendRequest {
    /// The chat session the turn belongs to (its log receives every event).
    pub session_id: String,
    /// Chosen by the UI so it can cancel the turn while it runs.
    pub turn_id: String,
    /// `@agent` handoff; the primary when absent.
    pub agent: Option<String>,
    /// Whether `agent` was typed as `@agent` in the message (else picked in the
    /// window): a restart shows the message as it was typed.
    #[serde(default)]
    pub handoff_typed: bool,
    pub message: String,
}

/// Runs one user turn in its session; its start, every event of its call tree and
/// its end go through `on_update`, each after it is in the session's log (and the
/// trace, when export is on).
#[tauri::command]
#[specta::specta]
pub(crate) async fn send_message(
    state: State<'_, AppState>,
    request: SendRequest,
    on_update: Channel<TurnUpdate>,
) -> Result<TurnOutcome, AppError> {
    let turn = SessionTurn {
        session_id: request.session_id,
        turn_id: request.turn_id,
        agent: request.agent,
        handoff_typed: request.handoff_typed,
        message: request.message,
    };
    let show: Show = Arc::new(move |update: TurnUpdate| drop(on_update.send(update)));
    Ok(state.sessions.run_turn(state.live.dispatcher(), turn, ApprovalPolicy::Ask, show).await?)
}

/// The chat sessions, most recently used first.
#[tauri::command]
#[specta::specta]
pub(crate) fn list_sessions(state: State<'_, AppState>) -> Result<Vec<SessionSummary>, AppError> {
    Ok(state.sessions.list()?)
}

/// The delegation report over every session (`switchboard report`), from the first
/// instant of `since` to the end of `until` (UTC days, `YYYY-MM-DD`, either open),
/// read off the window's thread.
#[tauri::command]
#[specta::specta]
pub(crate) async fn delegation_report(
    state: State<'_, AppState>,
    since: Option<String>,
    until: Option<String>,
) -> Result<DelegationReport, AppError> {
    let day = |value: Option<String>| -> Result<Option<u64>, AppError> {
        value
            .map(|value| {
                day_start_ms(&value).ok_or_else(|| {
                    AppError::new(AppErrorKind::BadRequest, format!("{value:?} is not a date as YYYY-MM-DD"))
                })
            })
            .transpose()
    };
    let range = ReportRange { since_ms: day(since)?, until_ms: day(until)?.map(|start| start + 86_400_000) };
    let sessions = state.sessions.clone();
    tauri::async_runtime::spawn_blocking(move || sessions.report(range))
        .await
        .map_err(|error| AppError::new(AppErrorKind::Io, format!("the report stopped: {error}")))?
        .map_err(AppError::from)
}

/// Runs one logged tool-agent call again (`of_call` of `of_turn`, with `request`
/// or the logged one) as turn `turn_id` of its session, through the same caller's
/// entries, limits and approvals. Its start, events and end come through
/// `on_update` as a turn's do (the chat and the tree show it live, its approvals
/// are answered there); the answer is both runs, to be set side by side.
#[tauri::command]
#[specta::specta]
pub(crate) async fn rerun_call(
    state: State<'_, AppState>,
    session_id: String,
    turn_id: String,
    of_turn: String,
    of_call: String,
    request: Option<String>,
    on_update: Channel<TurnUpdate>,
) -> Result<RerunOutcome, AppError> {
    let show: Show = Arc::new(move |update: TurnUpdate| drop(on_update.send(update)));
    let rerun = Rerun { session_id, turn_id, of_turn: Some(of_turn), of_call, request, context: None };
    Ok(state.sessions.rerun_call(state.live.dispatcher(), rerun, ApprovalPolicy::Ask, show).await?)
}

/// Starts a chat session.
#[tauri::command]
#[specta::specta]
pub(crate) fn create_session(state: State<'_, AppState>, title: String) -> Result<SessionSummary, AppError> {
    Ok(state.sessions.create(&title)?)
}

#[tauri::command]
#[specta::specta]
pub(crate) fn rename_session(state: State<'_, AppState>, id: String, title: String) -> Result<(), AppError> {
    Ok(state.sessions.rename(&id, &title)?)
}

#[tauri::command]
#[specta::specta]
pub(crate) fn delete_session(state: State<'_, AppState>, id: String) -> Result<(), AppError> {
    Ok(state.sessions.delete(&id)?)
}

/// A session as the window opens it: its log, and the turns the core finds
/// interrupted (no end, their process gone), with what they had finished.
#[derive(Debug, Clone, Serialize, Type)]
pub struct OpenedSession {
    #[serde(flatten)]
    pub log: SessionLog,
    pub interrupted: Vec<InterruptedTurn>,
}

/// A session's log: its messages, every event of every turn, retractions; and its
/// interrupted turns.
#[tauri::command]
#[specta::specta]
pub(crate) fn load_session(state: State<'_, AppState>, id: String) -> Result<OpenedSession, AppError> {
    let log = state.sessions.load(&id)?;
    let interrupted = log.interrupted();
    Ok(OpenedSession { log, interrupted })
}

/// Resumes interrupted turn `of_turn` of a session as turn `turn_id`: the calls it
/// had finished are handed back from the log, not run or paid again; its updates
/// come through `on_update` as a turn's do. A turn that is not interrupted is
/// refused in words, and nothing runs.
#[tauri::command]
#[specta::specta]
pub(crate) async fn resume_turn(
    state: State<'_, AppState>,
    session_id: String,
    of_turn: String,
    turn_id: String,
    on_update: Channel<TurnUpdate>,
) -> Result<TurnOutcome, AppError> {
    let show: Show = Arc::new(move |update: TurnUpdate| drop(on_update.send(update)));
    let turn = (session_id.as_str(), of_turn.as_str(), turn_id.as_str());
    Ok(state.sessions.resume_turn(state.live.dispatcher(), turn, ApprovalPolicy::Ask, show).await?)
}

/// Takes a turn back (retry, edit and resend): it stays in the log, marked.
#[tauri::command]
#[specta::specta]
pub(crate) fn retract_turn(state: State<'_, AppState>, session_id: String, turn_id: String) -> Result<(), AppError> {
    Ok(state.sessions.retract_turn(&session_id, &turn_id)?)
}

/// Writes a turn's call-tree events as JSON where the user picks in the save
/// dialog (suggesting `<session>-<turn>.json`); the path, or `None` when cancelled.
#[tauri::command]
#[specta::specta]
pub(crate) async fn export_turn(
    state: State<'_, AppState>,
    session_id: String,
    turn_id: String,
) -> Result<Option<String>, AppError> {
    let events = state.sessions.turn_events(&session_id, &turn_id)?;
    let log = state.sessions.load(&session_id)?;
    let title = crate::commands::export::title_of(&log).unwrap_or("session");
    let name = crate::commands::export::turn_file_name(title, events.first().map(|event| event.ts_ms));
    let document = serde_json::to_vec_pretty(&events).expect("events serialize");
    crate::commands::export::save_as(&state, name, "JSON", "json", &document).await
}

/// Keeps a slash command's note in the session's log (the chat shows it again
/// when the session is reopened).
#[tauri::command]
#[specta::specta]
pub(crate) fn log_command_note(
    state: State<'_, AppState>,
    session_id: String,
    command: String,
    outcome: String,
    text: String,
) -> Result<(), AppError> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_millis());
    Ok(state.sessions.log_command_note(&session_id, &command, &outcome, &text, now as u64)?)
}

/// Cancels a running turn; false when it is not running.
#[tauri::command]
#[specta::specta]
pub(crate) fn cancel_turn(state: State<'_, AppState>, turn_id: String) -> bool {
    state.sessions.cancel_turn(&turn_id)
}

/// Answers the approval request of a waiting call; false when none is waiting.
#[tauri::command]
#[specta::specta]
pub(crate) fn resolve_approval(
    state: State<'_, AppState>,
    turn_id: String,
    call_id: String,
    decision: ApprovalDecision,
) -> bool {
    state.sessions.resolve_approval(&turn_id, &call_id, decision)
}

/// Answers the question a remote agent asked in a running turn (`None` declines).
#[tauri::command]
#[specta::specta]
pub(crate) fn answer_input(
    state: State<'_, AppState>,
    turn_id: String,
    call_id: String,
    answer: Option<String>,
) -> bool {
    state.sessions.answer_input(&turn_id, &call_id, answer)
}

/// Sends a message into a running call (`Steering` on its start says whether it
/// can take one); its `call_steered` event follows when it takes it.
#[tauri::command]
#[specta::specta]
pub(crate) fn steer_call(
    state: State<'_, AppState>,
    turn_id: String,
    call_id: String,
    message: String,
) -> Result<(), AppError> {
    state.sessions.steer_call(&turn_id, &call_id, &message, "user").map_err(|refusal| {
        let kind = match &refusal {
            SteerRefusal::NotRunning => AppErrorKind::NotFound,
            SteerRefusal::NotSteerable(_) => AppErrorKind::NotSteerable,
            SteerRefusal::BadMessage(_) => AppErrorKind::BadRequest,
        };
        AppError::new(kind, refusal.to_string())
    })
}

/// Cancels one call of a running turn with its subtree; its parent continues.
#[tauri::command]
#[specta::specta]
pub(crate) fn cancel_call(state: State<'_, AppState>, turn_id: String, call_id: String) -> bool {
    state.sessions.cancel_call(&turn_id, &call_id)
}

//! Turns run in a chat session: the user's message, every event of the call tree as
//! it streams (logged before the shell shows it) and the turn's end go into the
//! session's log; the history and the "approve always" answers come back from it,
//! after a restart too. Running turns are steered by their id (cancel the turn or
//! a call, answer an approval), whichever shell started them.

use std::collections::HashMap;
use std::path::PathBuf;

/// The most of a command note's command or text a log keeps.
pub const NOTE_BYTES: usize = 16 * 1024;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::store::{SessionError, SessionLog, SessionRecord, SessionStore, SessionSummary};
use crate::dispatch::{ApprovalPolicy, Dispatcher, Session, SteerRefusal, TurnControl, TurnOutcome, TurnRequest};
use crate::event::{now_ms, ApprovalDecision, CallEvent};

/// Names a folder for session logs other than the platform's data folder.
pub const DATA_DIR_ENV: &str = "SWITCHBOARD_DATA_DIR";

/// Where the app's data lives when no one says otherwise: `$SWITCHBOARD_DATA_DIR`,
/// else the platform data folder under the desktop app's identifier (the same
/// folder the app uses, so the CLI and the window see the same sessions).
pub fn default_data_dir() -> PathBuf {
    if let Some(folder) = std::env::var_os(DATA_DIR_ENV).filter(|value| !value.is_empty()) {
        return PathBuf::from(folder);
    }
    dirs::data_dir().unwrap_or_else(|| PathBuf::from(".")).join("dev.switchboard.desktop")
}

/// A user turn in a chat session.
#[derive(Debug, Clone, Default)]
pub struct SessionTurn {
    pub session_id: String,
    /// Chosen by the caller, so it can steer the turn while it runs.
    pub turn_id: String,
    /// `@agent` handoff; the primary when `None`.
    pub agent: Option<String>,
    /// Whether `agent` was typed as `@agent` in the message (else picked).
    pub handoff_typed: bool,
    pub message: String,
}

/// One logged tool-agent call to run again, as a new turn of its session.
#[derive(Debug, Clone, PartialEq)]
pub struct Rerun {
    pub session_id: String,
    /// The new turn's id, chosen by the caller so it can steer it while it runs.
    pub turn_id: String,
    /// The turn of the call (the latest with such a call id when none).
    pub of_turn: Option<String>,
    pub of_call: String,
    /// An edited request (the logged one when none), and context (likewise).
    pub request: Option<String>,
    pub context: Option<serde_json::Value>,
}

/// The call as it ran first, and as it ran again: to be shown side by side.
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type)]
pub struct RerunOutcome {
    pub original: super::rerun::CallSummary,
    pub rerun: super::rerun::CallSummary,
}

/// A re-run that has begun: logged as a turn, before its call runs; what a shell
/// shows first (the turn's line, the agent that answers it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunBegun {
    pub line: String,
    pub agent: String,
}

/// A call made from outside the chat (an MCP client's tool call), kept as a turn
/// of a session so a window shows it like any other turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideTurn {
    pub session_id: String,
    pub turn_id: String,
}

/// The chat sessions of one data folder, with what each keeps while the program
/// runs (approvals, persistent delegates' conversations) and the turns running now.
#[derive(Debug)]
pub struct ChatSessions {
    store: Arc<SessionStore>,
    live: Mutex<HashMap<String, Session>>,
    running: Mutex<HashMap<String, TurnControl>>,
    next_id: AtomicU64,
}

impl ChatSessions {
    /// The sessions whose logs are in `folder` (created if missing).
    pub fn open(folder: impl Into<PathBuf>) -> Result<ChatSessions, SessionError> {
        Ok(ChatSessions {
            store: Arc::new(SessionStore::open(folder)?),
            live: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        })
    }

    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        self.store.list()
    }

    /// A session's log: its messages, every event of every turn, retractions.
    pub fn load(&self, id: &str) -> Result<SessionLog, SessionError> {
        self.store.load(id)
    }

    /// The delegation report over every session's log, within `range`.
    pub fn report(&self, range: super::report::ReportRange) -> Result<super::report::DelegationReport, SessionError> {
        super::report::report(&self.store, range)
    }

    /// Runs one logged tool-agent call again as a new turn of its session, marked
    /// as a re-run of it (never history): the same caller's entries, limits and
    /// approvals apply (through `Dispatcher::run_tool_call`), with the logged
    /// request and context unless edited ones are given. Every event is logged
    /// before `on_event` sees it. Returns both calls, summed up alike.
    pub async fn rerun_call(
        &self,
        dispatcher: &Dispatcher,
        rerun: Rerun,
        policy: ApprovalPolicy,
        on_begin: impl FnOnce(&RerunBegun),
        on_event: impl Fn(CallEvent) + Send + Sync + 'static,
    ) -> Result<RerunOutcome, SessionError> {
        let log = self.store.load(&rerun.session_id)?;
        let no_call = || SessionError::NoCall {
            session: rerun.session_id.clone(),
            turn: rerun.of_turn.clone(),
            call: rerun.of_call.clone(),
        };
        let original = super::rerun::logged_call(&log, rerun.of_turn.as_deref(), &rerun.of_call).ok_or_else(no_call)?;
        let agent = original.summary.agent.clone();
        let request = rerun.request.clone().unwrap_or_else(|| original.request.clone());
        let context = rerun.context.clone().or_else(|| original.context.clone());
        let control = TurnControl::new(policy, self.engine_session(&rerun.session_id)?);
        let line = super::rerun::rerun_line(&original.summary, &request);
        self.begin(&rerun.session_id, &rerun.turn_id, &line, (Some(agent.clone()), Some(false)), &control)?;
        on_begin(&RerunBegun { line, agent: agent.clone() });
        self.store.append(
            &rerun.session_id,
            &SessionRecord::Rerun {
                turn_id: rerun.turn_id.clone(),
                of_turn: original.summary.turn_id.clone(),
                of_call: original.summary.call_id.clone(),
            },
        )?;
        let (store, session_id, turn_id) = (self.store.clone(), rerun.session_id.clone(), rerun.turn_id.clone());
        let first_call: Arc<Mutex<Option<String>>> = Arc::default();
        let (seen, log_failure): (_, Arc<Mutex<Option<SessionError>>>) = (first_call.clone(), Arc::default());
        let (failure, stopping) = (log_failure.clone(), control.clone());
        let sink = Arc::new(move |event: CallEvent| {
            if let Err(error) = append_event(&store, &session_id, &turn_id, &event) {
                let mut failure = failure.lock().unwrap();
                if failure.is_none() {
                    *failure = Some(error);
                    stopping.cancel_turn();
                }
                return;
            }
            seen.lock().unwrap().get_or_insert_with(|| event.call_id.clone());
            on_event(event);
        });
        let request = crate::ToolCallRequest {
            caller: original.caller.clone(),
            agent: agent.clone(),
            request,
            context,
            limits: None,
        };
        let outcome = dispatcher.run_tool_call(request, sink, control).await;
        let ended = self.end(&rerun.session_id, &rerun.turn_id, outcome.status, &outcome.text, &agent);
        if let Some(error) = log_failure.lock().unwrap().take() {
            return Err(error);
        }
        ended?;
        let call_id = first_call.lock().unwrap().clone().ok_or_else(no_call)?;
        let log = self.store.load(&rerun.session_id)?;
        let again = super::rerun::logged_call(&log, Some(&rerun.turn_id), &call_id).ok_or_else(no_call)?;
        Ok(RerunOutcome { original: original.summary, rerun: again.summary })
    }

    /// Starts a session with a fresh id.
    pub fn create(&self, title: &str) -> Result<SessionSummary, SessionError> {
        let now_ms = now_ms();
        let id = format!("s{now_ms}-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        self.store.create(&id, title, now_ms)
    }

    /// The lock that makes find-or-create one step (`SessionStore::creation_lock`).
    pub fn creation_lock(&self) -> Result<std::fs::File, SessionError> {
        self.store.creation_lock()
    }

    /// Starts a session with the id the user chose (`switchboard ask --session`).
    pub fn create_with_id(&self, id: &str, title: &str) -> Result<SessionSummary, SessionError> {
        self.store.create(id, title, now_ms())
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<(), SessionError> {
        self.store.rename(id, title)
    }

    pub fn delete(&self, id: &str) -> Result<(), SessionError> {
        self.live.lock().unwrap().remove(id);
        self.store.delete(id)
    }

    /// Takes a turn back (retry, edit and resend): it stays in the log, marked, and
    /// no longer counts as history.
    pub fn retract_turn(&self, session_id: &str, turn_id: &str) -> Result<(), SessionError> {
        self.store.append(session_id, &SessionRecord::Retracted { turn_id: turn_id.to_string() })
    }

    /// Keeps a slash command's note in the session's log, so a reopened chat shows
    /// it where it was; the texts are cut to `NOTE_BYTES` each.
    pub fn log_command_note(
        &self,
        session_id: &str,
        command: &str,
        outcome: &str,
        text: &str,
        ts_ms: u64,
    ) -> Result<(), SessionError> {
        let cut = |text: &str| -> String {
            let mut end = text.len().min(NOTE_BYTES);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_string()
        };
        let outcome = if ["done", "error", "prompt"].contains(&outcome) { outcome } else { "done" };
        let record =
            SessionRecord::CommandNote { command: cut(command), outcome: outcome.to_string(), text: cut(text), ts_ms };
        self.store.append(session_id, &record)
    }

    /// Every event of one turn, in order (for export).
    pub fn turn_events(&self, session_id: &str, turn_id: &str) -> Result<Vec<CallEvent>, SessionError> {
        let events = self.store.load(session_id)?.turn_events(turn_id);
        if events.is_empty() {
            return Err(SessionError::NoTurn { session: session_id.to_string(), turn: turn_id.to_string() });
        }
        Ok(events)
    }

    /// The engine session of a chat session. The first time it is needed after a
    /// start, its "approve always" answers are restored from its log (the only
    /// time the events are read back).
    fn engine_session(&self, id: &str) -> Result<Session, SessionError> {
        if let Some(session) = self.live.lock().unwrap().get(id) {
            return Ok(session.clone());
        }
        let session = Session::default();
        for agent in self.store.load(id)?.approved_always() {
            session.approve(&agent);
        }
        Ok(self.live.lock().unwrap().entry(id.to_string()).or_insert(session).clone())
    }

    /// Runs one turn in its session: logs the user's message, then every event
    /// (each appended to the log before `on_event` sees it), then the turn's end.
    /// The history is the session's, from its log. Approvals are answered by
    /// `policy`, or through `resolve_approval` while the turn runs. Returns how the
    /// turn ended; the details came through the events.
    pub async fn run_turn(
        &self,
        dispatcher: &Dispatcher,
        turn: SessionTurn,
        policy: ApprovalPolicy,
        on_event: impl Fn(CallEvent) + Send + Sync + 'static,
    ) -> Result<TurnOutcome, SessionError> {
        let history = self.store.conversation(&turn.session_id)?.history();
        let control = TurnControl::new(policy, self.engine_session(&turn.session_id)?);
        let handoff = turn.agent.as_ref().map(|_| turn.handoff_typed);
        self.begin(&turn.session_id, &turn.turn_id, &turn.message, (turn.agent.clone(), handoff), &control)?;
        let (store, session_id, turn_id) = (self.store.clone(), turn.session_id.clone(), turn.turn_id.clone());
        let log_failure: Arc<Mutex<Option<SessionError>>> = Arc::default();
        let (failure, stopping) = (log_failure.clone(), control.clone());
        let sink = Arc::new(move |event: CallEvent| {
            // Logged before it is shown: what the window saw, a restart sees. An
            // event that cannot be logged is not shown, and the turn is stopped.
            if let Err(error) = append_event(&store, &session_id, &turn_id, &event) {
                let mut failure = failure.lock().unwrap();
                if failure.is_none() {
                    tracing::warn!(%error, "the session log cannot be written: the turn is stopped");
                    *failure = Some(error);
                    stopping.cancel_turn();
                }
                return;
            }
            on_event(event);
        });
        let request = TurnRequest { agent: turn.agent.clone(), history, message: turn.message.clone() };
        let outcome = dispatcher.run_turn(request, sink, control).await;
        let ended = self.end(&turn.session_id, &turn.turn_id, outcome.status, &outcome.text, &outcome.answered_by);
        if let Some(error) = log_failure.lock().unwrap().take() {
            return Err(error);
        }
        ended?;
        Ok(outcome)
    }

    /// A turn starts: its user message is logged, and it can be steered by its id.
    fn begin(
        &self,
        session_id: &str,
        turn_id: &str,
        text: &str,
        (agent, handoff): (Option<String>, Option<bool>),
        control: &TurnControl,
    ) -> Result<(), SessionError> {
        let record = SessionRecord::UserMessage {
            turn_id: turn_id.to_string(),
            text: text.to_string(),
            agent,
            handoff,
            process: super::interrupted::TurnProcess::current(),
            ts_ms: now_ms(),
        };
        self.store.append(session_id, &record)?;
        self.running.lock().unwrap().insert(turn_id.to_string(), control.clone());
        Ok(())
    }

    /// A turn ends: it can no longer be steered, and its end is logged.
    fn end(
        &self,
        session_id: &str,
        turn_id: &str,
        status: crate::event::CallStatus,
        text: &str,
        answered_by: &str,
    ) -> Result<(), SessionError> {
        self.running.lock().unwrap().remove(turn_id);
        let record = SessionRecord::TurnEnded {
            turn_id: turn_id.to_string(),
            status,
            text: text.to_string(),
            answered_by: answered_by.to_string(),
        };
        self.store.append(session_id, &record)
    }

    /// The session `id`, created with `title` when there is none yet.
    pub fn ensure(&self, id: &str, title: &str) -> Result<(), SessionError> {
        match self.create_with_id(id, title) {
            Ok(_) | Err(SessionError::Exists(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Starts logging an outside call as a turn: `line` (who asked whom what) is
    /// its user message, and while it runs it is steered by its turn id through
    /// `control`, as a turn is (cancel it or a call, answer an approval).
    pub fn begin_outside_turn(
        &self,
        turn: &OutsideTurn,
        line: &str,
        agent: &str,
        control: &TurnControl,
    ) -> Result<(), SessionError> {
        self.begin(&turn.session_id, &turn.turn_id, line, (Some(agent.to_string()), Some(false)), control)
    }

    /// Logs one event of an outside call (before the shell shows it).
    pub fn log_outside_event(&self, turn: &OutsideTurn, event: &CallEvent) -> Result<(), SessionError> {
        append_event(&self.store, &turn.session_id, &turn.turn_id, event)
    }

    /// Logs the end of an outside call; it can no longer be steered.
    pub fn end_outside_turn(
        &self,
        turn: &OutsideTurn,
        status: crate::event::CallStatus,
        text: &str,
        answered_by: &str,
    ) -> Result<(), SessionError> {
        self.end(&turn.session_id, &turn.turn_id, status, text, answered_by)
    }

    /// Cancels a running turn; false when it is not running.
    pub fn cancel_turn(&self, turn_id: &str) -> bool {
        self.running.lock().unwrap().get(turn_id).map(TurnControl::cancel_turn).is_some()
    }

    /// Cancels one call of a running turn with its subtree; its parent continues.
    pub fn cancel_call(&self, turn_id: &str, call_id: &str) -> bool {
        self.running.lock().unwrap().get(turn_id).is_some_and(|control| control.cancel_call(call_id))
    }

    /// Sends a message into a running call of a running turn (see
    /// `TurnControl::steer_call`).
    pub fn steer_call(&self, turn_id: &str, call_id: &str, message: &str, by: &str) -> Result<(), SteerRefusal> {
        let control = self.running.lock().unwrap().get(turn_id).cloned().ok_or(SteerRefusal::NotRunning)?;
        control.steer_call(call_id, message, by)
    }

    /// Answers the approval request of a waiting call; false when none is waiting.
    pub fn resolve_approval(&self, turn_id: &str, call_id: &str, decision: ApprovalDecision) -> bool {
        self.running.lock().unwrap().get(turn_id).is_some_and(|control| control.resolve_approval(call_id, decision))
    }

    /// Answers the question a remote agent asked in a running turn (`None` declines);
    /// false when no such question waits.
    pub fn answer_input(&self, turn_id: &str, call_id: &str, answer: Option<String>) -> bool {
        let control = self.running.lock().unwrap().get(turn_id).cloned();
        control.is_some_and(|control| control.answer_input(call_id, answer))
    }
}

/// Appends one event of a turn to its session's log.
fn append_event(store: &SessionStore, session_id: &str, turn_id: &str, event: &CallEvent) -> Result<(), SessionError> {
    store.append(session_id, &SessionRecord::Event { turn_id: turn_id.to_string(), event: event.clone() })
}

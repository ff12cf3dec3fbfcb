//! Turns run in a chat session: the user's message, every event of the call tree as
//! it streams and the turn's end go into the session's log, then into the trace,
//! then to the shell (`pipeline.rs`, the one way out of every kind of turn: a chat
//! turn, a re-run, an MCP client's call); the history and the "approve always"
//! answers come back from the log, after a restart too. Running turns are controlled
//! by their id (cancel the turn or a call, answer an approval, send a message into
//! a call), whichever shell started them.

use std::collections::HashMap;
use std::path::PathBuf;

/// The most of a command note's command or text a log keeps.
pub const NOTE_BYTES: usize = 16 * 1024;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::pipeline::{LogTarget, Show, Tracer, TurnPipeline};
use super::store::{SessionError, SessionLog, SessionRecord, SessionStore, SessionSummary};
use crate::config::Config;
use crate::dispatch::{ApprovalPolicy, Dispatcher, Session, SteerRefusal, TurnControl, TurnOutcome, TurnRequest};
use crate::event::{now_ms, ApprovalDecision, CallEvent};

/// The turns running now, by turn id, with the control of each.
type Running = Arc<Mutex<HashMap<String, TurnControl>>>;

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
    /// Chosen by the caller, so it can control the turn while it runs.
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
    /// The new turn's id, chosen by the caller so it can control it while it runs.
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
    running: Running,
    next_id: AtomicU64,
    /// Trace export, when it is on: every turn is traced after it is logged.
    tracer: Mutex<Option<Arc<dyn Tracer>>>,
}

impl std::fmt::Debug for dyn Tracer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Tracer")
    }
}

impl ChatSessions {
    /// The sessions whose logs are in `folder` (created if missing).
    pub fn open(folder: impl Into<PathBuf>) -> Result<ChatSessions, SessionError> {
        Ok(ChatSessions {
            store: Arc::new(SessionStore::open(folder)?),
            live: Mutex::new(HashMap::new()),
            running: Running::default(),
            next_id: AtomicU64::new(1),
            tracer: Mutex::new(None),
        })
    }

    /// Traces every turn from now on with `tracer` (none: trace export is off).
    pub fn set_tracer(&self, tracer: Option<Arc<dyn Tracer>>) {
        *self.tracer.lock().unwrap() = tracer;
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
    /// request and context unless edited ones are given. The turn is logged, traced
    /// and shown as any turn is (its start line says what runs again). Returns both
    /// calls, summed up alike.
    pub async fn rerun_call(
        &self,
        dispatcher: &Dispatcher,
        rerun: Rerun,
        policy: ApprovalPolicy,
        show: Show,
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
        let start = TurnStart {
            session_id: &rerun.session_id,
            turn_id: &rerun.turn_id,
            line: &line,
            agent: Some(agent.clone()),
            handoff: Some(false),
        };
        let mark = SessionRecord::Rerun {
            turn_id: rerun.turn_id.clone(),
            of_turn: original.summary.turn_id.clone(),
            of_call: original.summary.call_id.clone(),
        };
        let pipeline = self.open_turn(&dispatcher.config(), start, Some(mark), &control, show)?;
        let first_call: Arc<Mutex<Option<String>>> = Arc::default();
        let (seen, inner) = (first_call.clone(), pipeline.sink());
        let sink: crate::event::EventSink = Arc::new(move |event: CallEvent| {
            seen.lock().unwrap().get_or_insert_with(|| event.call_id.clone());
            inner(event);
        });
        let request = crate::ToolCallRequest {
            caller: original.caller.clone(),
            agent: agent.clone(),
            request,
            context,
            limits: None,
        };
        let outcome = dispatcher.run_tool_call(request, sink, control).await;
        pipeline.end(outcome.status, &outcome.text, &agent).await?;
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

    /// Runs one turn in its session: logs the user's message, then every event and
    /// the turn's end, each traced and shown after it is logged (`TurnPipeline`).
    /// The history is the session's, from its log. Approvals are answered by
    /// `policy`, or through `resolve_approval` while the turn runs. Returns how the
    /// turn ended; the details came through the updates.
    pub async fn run_turn(
        &self,
        dispatcher: &Dispatcher,
        turn: SessionTurn,
        policy: ApprovalPolicy,
        show: Show,
    ) -> Result<TurnOutcome, SessionError> {
        let history = self.store.conversation(&turn.session_id)?.history();
        let control = TurnControl::new(policy, self.engine_session(&turn.session_id)?);
        let start = TurnStart {
            session_id: &turn.session_id,
            turn_id: &turn.turn_id,
            line: &turn.message,
            agent: turn.agent.clone(),
            handoff: turn.agent.as_ref().map(|_| turn.handoff_typed),
        };
        let pipeline = self.open_turn(&dispatcher.config(), start, None, &control, show)?;
        let request = TurnRequest {
            agent: turn.agent.clone(),
            history,
            message: turn.message.clone(),
            reuse: vec![],
            continuation: None,
        };
        let outcome = dispatcher.run_turn(request, pipeline.sink(), control).await;
        pipeline.end(outcome.status, &outcome.text, &outcome.answered_by).await?;
        Ok(outcome)
    }

    /// Resumes interrupted turn `of_turn` as turn `turn_id` (`resume.rs`): the same
    /// message with the history it had; the calls it had finished answered from the
    /// log, not run or paid again; logged, traced and shown as any turn, its
    /// records naming the turn they resume. A turn that is not interrupted is
    /// refused, and nothing runs.
    pub async fn resume_turn(
        &self,
        dispatcher: &Dispatcher,
        (session_id, of_turn, turn_id): (&str, &str, &str),
        policy: ApprovalPolicy,
        show: Show,
    ) -> Result<TurnOutcome, SessionError> {
        let resumable = self.store.load(session_id)?.resumable(of_turn)?;
        let control = TurnControl::new(policy, self.engine_session(session_id)?);
        let start = TurnStart {
            session_id,
            turn_id,
            line: &resumable.message,
            agent: resumable.agent.clone(),
            handoff: resumable.handoff,
        };
        let mark = SessionRecord::Resumed { turn_id: turn_id.to_string(), of_turn: of_turn.to_string() };
        let pipeline = self.open_turn(&dispatcher.config(), start, Some(mark), &control, show)?;
        let request = TurnRequest {
            agent: resumable.agent,
            history: resumable.history,
            message: resumable.message,
            reuse: resumable.reuse,
            continuation: resumable.continuation,
        };
        let outcome = dispatcher.run_turn(request, pipeline.sink(), control).await;
        pipeline.end(outcome.status, &outcome.text, &outcome.answered_by).await?;
        Ok(outcome)
    }

    /// A turn starts: its user message (and `mark`, a re-run's) is logged, it can
    /// be controlled by its id until it ends, and its pipeline shows its start.
    fn open_turn(
        &self,
        config: &Config,
        start: TurnStart<'_>,
        mark: Option<SessionRecord>,
        control: &TurnControl,
        show: Show,
    ) -> Result<TurnPipeline, SessionError> {
        let TurnStart { session_id, turn_id, line, agent, handoff } = start;
        let record = SessionRecord::UserMessage {
            turn_id: turn_id.to_string(),
            text: line.to_string(),
            agent: agent.clone(),
            handoff,
            process: super::interrupted::TurnProcess::current(),
            ts_ms: now_ms(),
        };
        let records: Vec<SessionRecord> = std::iter::once(record).chain(mark).collect();
        self.store.append_all(session_id, &records)?;
        self.running.lock().unwrap().insert(turn_id.to_string(), control.clone());
        let tracer = self.tracer.lock().unwrap().clone();
        let trace = tracer.map(|tracer| tracer.turn(config, Some(session_id)));
        let log = LogTarget { store: self.store.clone(), session_id: session_id.into(), turn_id: turn_id.into() };
        let (running, ended) = (self.running.clone(), turn_id.to_string());
        let pipeline = TurnPipeline::start(Some(log), trace, show, Some(control.clone()))
            .on_end(move || drop(running.lock().unwrap().remove(&ended)));
        pipeline.show_started(line, agent.as_deref().unwrap_or(""));
        Ok(pipeline)
    }

    /// The session `id`, created with `title` when there is none yet.
    pub fn ensure(&self, id: &str, title: &str) -> Result<(), SessionError> {
        match self.create_with_id(id, title) {
            Ok(_) | Err(SessionError::Exists(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Starts an outside call as a turn: `line` (who asked whom what) is its user
    /// message, and while it runs it is controlled by its turn id through `control`,
    /// as a turn is (cancel it or a call, answer an approval). Its events go
    /// through the returned pipeline (logged, traced, shown), ended by its end.
    pub fn begin_outside_turn(
        &self,
        config: &Config,
        turn: &OutsideTurn,
        (line, agent): (&str, &str),
        control: &TurnControl,
        show: Show,
    ) -> Result<TurnPipeline, SessionError> {
        let start = TurnStart {
            session_id: &turn.session_id,
            turn_id: &turn.turn_id,
            line,
            agent: Some(agent.to_string()),
            handoff: Some(false),
        };
        self.open_turn(config, start, None, control, show)
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

/// What a turn's first record says.
struct TurnStart<'a> {
    session_id: &'a str,
    turn_id: &'a str,
    line: &'a str,
    agent: Option<String>,
    handoff: Option<bool>,
}

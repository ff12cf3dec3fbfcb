//! A turn's way out, wired once for every kind of turn (a chat turn, a re-run, an
//! MCP client's call, `switchboard ask` with no session): each event is logged in
//! its session's log, then traced, then shown, in that order, by a thread of the
//! turn's own, so the dispatcher's event lock and the async workers never wait on
//! the disk. Events that arrive while a batch is written go out together in the
//! next one (one write of many lines). One failure rule: an event the log refused
//! is neither traced nor shown, the turn is stopped, and its end reports why.
//!
//! The core knows a trace only as [`Tracer`] (the OpenTelemetry export implements
//! it), and a shell only as what it is shown: [`TurnUpdate`]s, keyed by turn.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use specta::Type;

use super::lines::encode_event_line;
use super::store::{encode_line, SessionError, SessionRecord, SessionStore};
use crate::config::Config;
use crate::dispatch::TurnControl;
use crate::event::{CallEvent, CallStatus, EventSink};

/// The most events written in one batch.
const MAX_BATCH: usize = 1024;

/// Trace export as the core sees it: a trace per turn.
pub trait Tracer: Send + Sync {
    /// A new trace of one turn, of `conversation` (a session) on `config`'s agents.
    fn turn(&self, config: &Config, conversation: Option<&str>) -> Box<dyn TurnTrace>;
}

/// One turn's trace: every event is recorded, in order, after it is logged.
pub trait TurnTrace: Send {
    fn record(&self, event: &CallEvent);
}

/// What a shell is shown of a turn, in order: it started, each of its events (already
/// in the log and the trace), it ended (the end logged too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum TurnUpdate {
    /// `line` is the turn's message (for an MCP client's call, who asked which
    /// tool-agent what); `agent` the agent asked, empty for the primary.
    Started {
        line: String,
        agent: String,
    },
    /// One event of the turn's call tree.
    Event {
        event: Box<CallEvent>,
    },
    Finished {
        status: CallStatus,
        text: String,
        answered_by: String,
    },
}

/// Where a shell is shown a turn's updates (called on the turn's own thread).
pub type Show = Arc<dyn Fn(TurnUpdate) + Send + Sync>;

/// The session log a turn is written to.
pub(crate) struct LogTarget {
    pub store: Arc<SessionStore>,
    pub session_id: String,
    pub turn_id: String,
}

/// How a turn ended, to be logged and shown after its last event.
#[derive(Debug, Clone)]
struct Ending {
    status: CallStatus,
    text: String,
    answered_by: String,
}

// Events are nearly every item: moved whole, not boxed (no allocation per event).
#[allow(clippy::large_enum_variant)]
enum Item {
    Started { line: String, agent: String },
    Event(CallEvent),
    End(Ending),
}

/// One turn's log, trace and show, fed through [`TurnPipeline::sink`] and closed
/// by [`TurnPipeline::end`]. Dropped without an end, it writes what it was given
/// and stops (the turn is then seen as interrupted: its end is not in the log).
pub struct TurnPipeline {
    sender: Mutex<Option<mpsc::Sender<Item>>>,
    done: Option<tokio::sync::oneshot::Receiver<Result<(), SessionError>>>,
    /// Called when the turn ends (it can no longer be steered).
    on_end: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for TurnPipeline {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TurnPipeline").finish_non_exhaustive()
    }
}

impl TurnPipeline {
    /// A turn traced (when `tracer` is given) and shown, with no session log:
    /// `switchboard ask` with no `--session`, the CLI's MCP server.
    pub fn unlogged(
        tracer: Option<&dyn Tracer>,
        config: &Config,
        conversation: Option<&str>,
        show: Show,
    ) -> TurnPipeline {
        let trace = tracer.map(|tracer| tracer.turn(config, conversation));
        TurnPipeline::start(None, trace, show, None)
    }

    /// Starts the turn's thread; `stop` is what stops the turn when its log fails.
    pub(crate) fn start(
        log: Option<LogTarget>,
        trace: Option<Box<dyn TurnTrace>>,
        show: Show,
        stop: Option<TurnControl>,
    ) -> TurnPipeline {
        let (sender, receiver) = mpsc::channel();
        let (finished, done) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("turn-log".into())
            .spawn(move || {
                let result = write(&receiver, log.as_ref(), trace.as_deref(), &show, stop.as_ref());
                let _ = finished.send(result);
            })
            .expect("a thread can be started");
        TurnPipeline { sender: Mutex::new(Some(sender)), done: Some(done), on_end: None }
    }

    /// Runs `on_end` when the turn ends (before its end is logged).
    pub(crate) fn on_end(mut self, on_end: impl FnOnce() + Send + 'static) -> TurnPipeline {
        self.on_end = Some(Box::new(on_end));
        self
    }

    /// Shows the turn's start (its message is logged before the pipeline starts).
    pub(crate) fn show_started(&self, line: &str, agent: &str) {
        self.send(Item::Started { line: line.to_string(), agent: agent.to_string() });
    }

    fn send(&self, item: Item) {
        if let Some(sender) = self.sender.lock().unwrap().as_ref() {
            let _ = sender.send(item);
        }
    }

    /// The dispatcher's event sink for this turn: cheap, never waits on the disk.
    pub fn sink(&self) -> EventSink {
        let sender = self.sender.lock().unwrap().clone();
        Arc::new(move |event: CallEvent| {
            if let Some(sender) = &sender {
                let _ = sender.send(Item::Event(event));
            }
        })
    }

    /// Ends the turn: every event given is logged, traced and shown, then its end
    /// is logged and shown. The log's first failure, if it failed.
    pub async fn end(mut self, status: CallStatus, text: &str, answered_by: &str) -> Result<(), SessionError> {
        if let Some(on_end) = self.on_end.take() {
            on_end();
        }
        self.send(Item::End(Ending { status, text: text.to_string(), answered_by: answered_by.to_string() }));
        // The sink's clones end with the turn's dispatcher; this one ends the thread.
        self.sender.lock().unwrap().take();
        match self.done.take() {
            // The thread always answers, unless a shell's `show` panicked on it: that
            // panic is the turn's, as it was when events were shown on the turn's thread.
            Some(done) => done.await.unwrap_or_else(|_| panic!("a turn's show panicked on its pipeline thread")),
            None => Ok(()),
        }
    }
}

impl Drop for TurnPipeline {
    fn drop(&mut self) {
        if let Some(on_end) = self.on_end.take() {
            on_end();
        }
    }
}

/// The turn's thread: batches of what arrived, each logged in one write, then
/// traced, then shown; after a failed write, nothing more.
fn write(
    receiver: &mpsc::Receiver<Item>,
    log: Option<&LogTarget>,
    trace: Option<&dyn TurnTrace>,
    show: &Show,
    stop: Option<&TurnControl>,
) -> Result<(), SessionError> {
    let mut failure = None;
    let mut batch = Vec::new();
    let mut lines = Vec::new();
    let mut ended = false;
    // The end is the last item: events that come after it (none should) are not kept.
    while !ended {
        let Ok(first) = receiver.recv() else { break };
        batch.clear();
        ended = matches!(first, Item::End(_));
        batch.push(first);
        while batch.len() < MAX_BATCH && !ended {
            match receiver.try_recv() {
                Ok(item) => {
                    ended = matches!(item, Item::End(_));
                    batch.push(item);
                }
                Err(_) => break,
            }
        }
        if failure.is_some() {
            continue;
        }
        if let Some(log) = log {
            lines.clear();
            for item in &batch {
                match item {
                    Item::Event(event) => encode_event_line(&mut lines, &log.turn_id, event),
                    Item::End(ending) => encode_line(&mut lines, &end_record(ending, &log.turn_id)),
                    Item::Started { .. } => {}
                }
            }
            if let Err(error) = log.store.append_lines(&log.session_id, &lines) {
                // What the window saw, a restart sees: an event the log refused is
                // not shown, and the turn is stopped.
                tracing::warn!(%error, "the session log cannot be written: the turn is stopped");
                if let Some(stop) = stop {
                    stop.cancel_turn();
                }
                failure = Some(error);
                continue;
            }
        }
        for item in batch.drain(..) {
            match item {
                Item::Event(event) => {
                    if let Some(trace) = trace {
                        trace.record(&event);
                    }
                    show(TurnUpdate::Event { event: Box::new(event) });
                }
                Item::Started { line, agent } => show(TurnUpdate::Started { line, agent }),
                Item::End(Ending { status, text, answered_by }) => {
                    show(TurnUpdate::Finished { status, text, answered_by })
                }
            }
        }
    }
    failure.map_or(Ok(()), Err)
}

/// The log record of a turn's end.
fn end_record(ending: &Ending, turn_id: &str) -> SessionRecord {
    SessionRecord::TurnEnded {
        turn_id: turn_id.to_string(),
        status: ending.status,
        text: ending.text.clone(),
        answered_by: ending.answered_by.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::lines::encode_event_line;
    use super::super::store::{encode_line, SessionRecord};

    #[test]
    fn an_event_line_from_borrowed_parts_is_the_records_line() {
        for event in crate::sessions::test_records::sample_events() {
            let (mut borrowed, mut owned) = (Vec::new(), Vec::new());
            encode_event_line(&mut borrowed, "t7", &event);
            encode_line(&mut owned, &SessionRecord::Event { turn_id: "t7".into(), event });
            assert_eq!(String::from_utf8(borrowed).unwrap(), String::from_utf8(owned).unwrap());
        }
    }
}

//! Session logs on disk: one append-only JSON-lines log per session, written a
//! record at a time and flushed, so a killed app loses at most the record being
//! written (a torn last line is skipped on load). Every event of every turn is
//! logged, so past turns' call trees come back exactly.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use specta::Type;
use specta_typescript::Number;

use crate::contract::Message;
use crate::event::{ApprovalDecision, CallEvent, CallStatus, EventKind};

/// One line of a session log.
// Records are built one at a time and written at once; boxing the event would only
// add an allocation per line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionRecord {
    Created {
        title: String,
        #[specta(type = Number)]
        created_ms: u64,
    },
    Renamed {
        title: String,
    },
    UserMessage {
        turn_id: String,
        text: String,
        /// The `@agent` the turn was handed to, if any.
        agent: Option<String>,
        /// Whether that agent was typed as `@agent` before the message (`true`) or
        /// picked in the window (`false`), so a replay shows what was typed.
        /// Absent in logs written before it was kept: read as typed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handoff: Option<bool>,
        /// The process that runs the turn: gone with no end logged, the turn was
        /// interrupted (`SessionLog::interrupted`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        process: Option<super::interrupted::TurnProcess>,
        #[specta(type = Number)]
        ts_ms: u64,
    },
    Event {
        turn_id: String,
        event: CallEvent,
    },
    TurnEnded {
        turn_id: String,
        status: CallStatus,
        text: String,
        answered_by: String,
    },
    /// The turn was taken back (retry, edit and resend): it no longer counts as history.
    Retracted {
        turn_id: String,
    },
    /// The turn runs one call of an earlier turn again (`ChatSessions::rerun_call`):
    /// a side trial, never history.
    Rerun {
        turn_id: String,
        of_turn: String,
        of_call: String,
    },
    /// Turn `turn_id` resumes interrupted turn `of_turn`: it asks the same, and
    /// stands in its place in the history.
    Resumed {
        turn_id: String,
        of_turn: String,
    },
    /// A slash command typed in the chat and what it came to, as the chat showed it
    /// (never a turn: no model saw it, and it is not history).
    CommandNote {
        /// The command as typed.
        command: String,
        /// `done`, `error` or `prompt`.
        outcome: String,
        text: String,
        #[specta(type = Number)]
        ts_ms: u64,
    },
}

/// A session as the sidebar lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    #[specta(type = Number)]
    pub created_ms: u64,
    #[specta(type = Number)]
    pub updated_ms: u64,
    pub turns: u32,
}

/// A session's records, and what was skipped: damaged lines (a torn write, a
/// hand edit) and records of a kind a newer version writes.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SessionLog {
    pub id: String,
    pub records: Vec<SessionRecord>,
    /// How many damaged lines were skipped.
    pub skipped_lines: u32,
    /// The numbers (from 1) of the first damaged lines, at most `DAMAGED_NAMED`.
    pub damaged_lines: Vec<u32>,
    /// Records of a type this version does not know (a newer one wrote them).
    pub newer_records: u32,
}

/// How many damaged lines a log names.
pub const DAMAGED_NAMED: usize = 10;

impl SessionLog {
    /// The turns taken back (Retry, Edit and resend): the chat, its export and the
    /// report leave them out.
    pub fn taken_back(&self) -> std::collections::HashSet<&str> {
        self.records
            .iter()
            .filter_map(|record| match record {
                SessionRecord::Retracted { turn_id } => Some(turn_id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The turns that are not history: taken back, re-runs of a call, and
    /// interrupted turns that another turn resumed.
    fn retracted(&self) -> std::collections::HashSet<&str> {
        self.records
            .iter()
            .filter_map(|record| match record {
                SessionRecord::Retracted { turn_id } | SessionRecord::Rerun { turn_id, .. } => Some(turn_id.as_str()),
                SessionRecord::Resumed { of_turn, .. } => Some(of_turn.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The conversation so far, as the next turn's history: every user message and
    /// every answer of a turn that ended `ok`, oldest first; retracted turns and
    /// re-runs of a call left out.
    pub fn history(&self) -> Vec<Message> {
        self.history_before(None)
    }

    /// The history as it stood when turn `before` began (the whole history when
    /// `None`): what a turn that resumes it is sent.
    pub fn history_before(&self, before: Option<&str>) -> Vec<Message> {
        let retracted = self.retracted();
        let mut history = Vec::new();
        for record in &self.records {
            if let (Some(before), SessionRecord::UserMessage { turn_id, .. }) = (before, record) {
                if turn_id == before {
                    break;
                }
            }
            match record {
                SessionRecord::UserMessage { turn_id, text, .. } if !retracted.contains(turn_id.as_str()) => {
                    history.push(Message::user(text.clone()));
                }
                SessionRecord::TurnEnded { turn_id, status: CallStatus::Ok, text, .. }
                    if !retracted.contains(turn_id.as_str()) && !text.is_empty() =>
                {
                    history.push(Message::assistant(text.clone()));
                }
                _ => {}
            }
        }
        history
    }

    /// The agents answered "approve always" in this session (restored after a restart).
    pub fn approved_always(&self) -> Vec<String> {
        let mut agents: Vec<String> = Vec::new();
        for record in &self.records {
            if let SessionRecord::Event { event, .. } = record {
                let always = matches!(
                    &event.kind,
                    EventKind::ApprovalResolved { decision: ApprovalDecision::ApproveAlways, .. }
                );
                if always && !agents.contains(&event.agent) {
                    agents.push(event.agent.clone());
                }
            }
        }
        agents
    }

    /// Every event of one turn, in order.
    pub fn turn_events(&self, turn_id: &str) -> Vec<CallEvent> {
        self.records
            .iter()
            .filter_map(|record| match record {
                SessionRecord::Event { turn_id: id, event } if id == turn_id => Some(event.clone()),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("no session {0:?}")]
    NotFound(String),
    #[error("{0:?} is not a session id (1 to 64 of A-Z, a-z, 0-9 and -)")]
    BadId(String),
    #[error("a session {0:?} exists already")]
    Exists(String),
    #[error("session {session:?} has no turn {turn:?}")]
    NoTurn { session: String, turn: String },
    #[error("session {session:?} has no tool-agent call {call:?}{}", turn.as_ref().map(|turn| format!(" in turn {turn:?}")).unwrap_or_default())]
    NoCall { session: String, turn: Option<String>, call: String },
    #[error("turn {turn:?} of session {session:?} is not resumed: {why}")]
    NotResumable { session: String, turn: String, why: String },
}

/// One record as a log line (JSON and a newline), onto `lines`.
pub(super) fn encode_line(lines: &mut Vec<u8>, record: &SessionRecord) {
    serde_json::to_writer(&mut *lines, record).expect("records serialize");
    lines.push(b'\n');
}

/// Ends a line left torn by a crash mid-write, so the next record starts on a line
/// of its own (the torn one is skipped on load; the new one is not lost with it).
fn end_torn_line(file: &mut File) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}

enum Parsed {
    Record(Box<SessionRecord>),
    /// A JSON object with a `type` this version does not know.
    Newer,
    Damaged,
}

/// One line of a log: a record (an invalid UTF-8 byte read as U+FFFD rather than
/// losing the line), a record of a newer version, or damage.
fn parse_record(line: &[u8]) -> Parsed {
    if let Ok(record) = serde_json::from_slice::<SessionRecord>(line) {
        return Parsed::Record(Box::new(record));
    }
    let text = String::from_utf8_lossy(line);
    if let Ok(record) = serde_json::from_str::<SessionRecord>(&text) {
        return Parsed::Record(Box::new(record));
    }
    #[derive(Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: String,
    }
    #[derive(Deserialize)]
    struct EventOf {
        event: Typed,
    }
    // A kind a newer version writes is one serde does not know: `{"type": kind}`
    // alone is refused as an unknown variant, not for a missing field.
    fn unknown<T: serde::de::DeserializeOwned>(kind: String) -> bool {
        serde_json::from_value::<T>(serde_json::json!({ "type": kind }))
            .is_err_and(|error| error.to_string().starts_with("unknown variant"))
    }
    let newer = match serde_json::from_str::<Typed>(&text) {
        Ok(typed) if typed.kind == "event" => serde_json::from_str::<EventOf>(&text)
            .is_ok_and(|EventOf { event }| unknown::<crate::event::EventKind>(event.kind)),
        Ok(typed) => unknown::<SessionRecord>(typed.kind),
        Err(_) => false,
    };
    if newer {
        Parsed::Newer
    } else {
        Parsed::Damaged
    }
}

/// The folder of session logs.
#[derive(Debug)]
pub struct SessionStore {
    folder: PathBuf,
    writers: Mutex<HashMap<String, File>>,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + '_ {
    move |source| SessionError::Io { path: path.to_path_buf(), source }
}

impl SessionStore {
    pub fn open(folder: impl Into<PathBuf>) -> Result<SessionStore, SessionError> {
        let folder = folder.into();
        fs::create_dir_all(&folder).map_err(io_error(&folder))?;
        Ok(SessionStore { folder, writers: Mutex::new(HashMap::new()) })
    }

    fn path_of(&self, id: &str) -> Result<PathBuf, SessionError> {
        let valid = !id.is_empty()
            && id.len() <= 64
            && id.chars().all(|character| character.is_ascii_alphanumeric() || character == '-');
        if !valid {
            return Err(SessionError::BadId(id.to_string()));
        }
        Ok(self.folder.join(format!("{id}.jsonl")))
    }

    /// Holds the folder's creation lock (an exclusive `flock` on `.create.lock`,
    /// released when the file is dropped), so that finding a session by name and
    /// creating it when there is none is one step across processes.
    pub fn creation_lock(&self) -> Result<File, SessionError> {
        let path = self.folder.join(".create.lock");
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io_error(&path))?;
        file.lock().map_err(io_error(&path))?;
        Ok(file)
    }

    /// Starts a session; `id` is chosen by the caller (unique, `[A-Za-z0-9-]`). An
    /// existing session is never overwritten.
    pub fn create(&self, id: &str, title: &str, now_ms: u64) -> Result<SessionSummary, SessionError> {
        let path = self.path_of(id)?;
        OpenOptions::new().write(true).create_new(true).open(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => SessionError::Exists(id.to_string()),
            _ => SessionError::Io { path: path.clone(), source },
        })?;
        self.append(id, &SessionRecord::Created { title: title.to_string(), created_ms: now_ms })?;
        Ok(SessionSummary {
            id: id.to_string(),
            title: title.to_string(),
            created_ms: now_ms,
            updated_ms: now_ms,
            turns: 0,
        })
    }

    /// Appends one record and flushes it to the operating system.
    pub fn append(&self, id: &str, record: &SessionRecord) -> Result<(), SessionError> {
        self.append_all(id, std::slice::from_ref(record))
    }

    /// Appends records in order with one write(2) (a streaming turn's batch of
    /// events): records of turns that other processes append to the same session
    /// never interleave inside a line, nor inside the batch.
    pub fn append_all(&self, id: &str, records: &[SessionRecord]) -> Result<(), SessionError> {
        let mut lines = Vec::with_capacity(records.len() * 160);
        for record in records {
            encode_line(&mut lines, record);
        }
        self.append_lines(id, &lines)
    }

    /// Appends lines already encoded (`encode_line`, `encode_event_line`) with one write(2).
    pub(crate) fn append_lines(&self, id: &str, lines: &[u8]) -> Result<(), SessionError> {
        if lines.is_empty() {
            return Ok(());
        }
        let path = self.path_of(id)?;
        let mut writers = self.writers.lock().unwrap();
        if !writers.contains_key(id) {
            if !path.exists() {
                return Err(SessionError::NotFound(id.to_string()));
            }
            let mut file = OpenOptions::new().read(true).append(true).open(&path).map_err(io_error(&path))?;
            end_torn_line(&mut file).map_err(io_error(&path))?;
            writers.insert(id.to_string(), file);
        }
        let file = writers.get_mut(id).expect("inserted above");
        file.write_all(lines).map_err(io_error(&path))
    }

    /// Every record of a session, skipping lines that do not parse (a torn write).
    pub fn load(&self, id: &str) -> Result<SessionLog, SessionError> {
        self.read(id, true)
    }

    /// A session's records but its events (messages, turn ends, titles,
    /// retractions): all a history or a summary needs, read without parsing the
    /// events that are most of a log.
    pub fn conversation(&self, id: &str) -> Result<SessionLog, SessionError> {
        self.read(id, false)
    }

    fn read(&self, id: &str, with_events: bool) -> Result<SessionLog, SessionError> {
        let path = self.path_of(id)?;
        let file = File::open(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => SessionError::NotFound(id.to_string()),
            _ => SessionError::Io { path: path.clone(), source },
        })?;
        let mut log = SessionLog {
            id: id.to_string(),
            records: Vec::new(),
            skipped_lines: 0,
            damaged_lines: vec![],
            newer_records: 0,
        };
        for (number, line) in BufReader::new(file).split(b'\n').enumerate() {
            let line = line.map_err(io_error(&path))?;
            if line.iter().all(u8::is_ascii_whitespace) || (!with_events && line.starts_with(b"{\"type\":\"event\"")) {
                continue;
            }
            match parse_record(&line) {
                Parsed::Record(record) => log.records.push(*record),
                Parsed::Newer => log.newer_records += 1,
                Parsed::Damaged => {
                    log.skipped_lines += 1;
                    if log.damaged_lines.len() < DAMAGED_NAMED {
                        log.damaged_lines.push(u32::try_from(number + 1).unwrap_or(u32::MAX));
                    }
                }
            }
        }
        Ok(log)
    }

    /// Every session's id, in no order.
    pub fn ids(&self) -> Result<Vec<String>, SessionError> {
        let mut ids = Vec::new();
        for entry in fs::read_dir(&self.folder).map_err(io_error(&self.folder))? {
            let entry = entry.map_err(io_error(&self.folder))?;
            if let Some(id) = entry.file_name().to_string_lossy().strip_suffix(".jsonl") {
                ids.push(id.to_string());
            }
        }
        Ok(ids)
    }

    /// The sessions, most recently updated first.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let mut sessions = Vec::new();
        for entry in fs::read_dir(&self.folder).map_err(io_error(&self.folder))? {
            let entry = entry.map_err(io_error(&self.folder))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".jsonl") else { continue };
            if let Ok(summary) = self.summary(id) {
                sessions.push(summary);
            }
        }
        sessions.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| a.id.cmp(&b.id)));
        Ok(sessions)
    }

    fn summary(&self, id: &str) -> Result<SessionSummary, SessionError> {
        let mut summary =
            SessionSummary { id: id.to_string(), title: String::new(), created_ms: 0, updated_ms: 0, turns: 0 };
        for record in self.conversation(id)?.records {
            match record {
                SessionRecord::Created { title, created_ms } => {
                    summary.title = title;
                    summary.created_ms = created_ms;
                    summary.updated_ms = summary.updated_ms.max(created_ms);
                }
                SessionRecord::Renamed { title } => summary.title = title,
                SessionRecord::UserMessage { ts_ms, .. } => {
                    summary.turns += 1;
                    summary.updated_ms = summary.updated_ms.max(ts_ms);
                }
                // A turn taken back, or an interrupted turn another resumed, counts no more.
                SessionRecord::Retracted { .. } | SessionRecord::Resumed { .. } => {
                    summary.turns = summary.turns.saturating_sub(1)
                }
                SessionRecord::CommandNote { ts_ms, .. } => summary.updated_ms = summary.updated_ms.max(ts_ms),
                SessionRecord::Event { .. } | SessionRecord::TurnEnded { .. } | SessionRecord::Rerun { .. } => {}
            }
        }
        Ok(summary)
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<(), SessionError> {
        self.append(id, &SessionRecord::Renamed { title: title.to_string() })
    }

    pub fn delete(&self, id: &str) -> Result<(), SessionError> {
        let path = self.path_of(id)?;
        self.writers.lock().unwrap().remove(id);
        fs::remove_file(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => SessionError::NotFound(id.to_string()),
            _ => SessionError::Io { path: path.clone(), source },
        })
    }
}

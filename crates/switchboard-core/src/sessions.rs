//! Chat sessions: `store.rs` keeps each session's log on disk (every event of every
//! turn, append-only); `chat.rs` runs a turn *in* a session (the log written as the
//! turn streams, the history and "approve always" answers read back from it) and
//! steers running turns by id. Every shell (the desktop app, the CLI, an MCP
//! server) calls `ChatSessions`, so none of them re-implements a session.

mod chat;
mod store;

pub use chat::{default_data_dir, ChatSessions, OutsideTurn, SessionTurn, DATA_DIR_ENV};
pub use store::{SessionError, SessionLog, SessionRecord, SessionStore, SessionSummary};

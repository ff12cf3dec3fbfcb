//! Chat sessions: `store.rs` keeps each session's log on disk (every event of every
//! turn, append-only); `chat.rs` runs a turn *in* a session (the history and
//! "approve always" answers read back from its log) and steers running turns by
//! id; `pipeline.rs` is every turn's one way out (logged, then traced, then shown,
//! off the async workers, in batches); `markdown.rs` writes a session as Markdown for a
//! person to keep; `report.rs` reads every log into the delegation report. The app and `switchboard
//! ask --session` run their turns through `ChatSessions`, and the app's MCP endpoint
//! logs its calls there as outside turns; `switchboard mcp` and `ask` without a
//! session keep no log, and trace and show through an unlogged `TurnPipeline`.

mod chat;
pub mod interrupted;
mod lines;
pub mod markdown;
pub mod pipeline;
pub mod report;
pub mod rerun;
pub mod resume;
mod store;
#[cfg(test)]
mod test_records;

pub use chat::{
    default_data_dir, ChatSessions, OutsideTurn, Rerun, RerunOutcome, SessionTurn, DATA_DIR_ENV, NOTE_BYTES,
};
pub use pipeline::{Show, Tracer, TurnPipeline, TurnTrace, TurnUpdate};
pub use store::{SessionError, SessionLog, SessionRecord, SessionStore, SessionSummary};

/// A new turn id: `{prefix}{now_ms}-{12 random hex digits}`, time-ordered and unique
/// across processes (twenty `ask --session same` started in one millisecond each
/// get their own). Call ids are numbered within their turn (`c1`, `c2`…): every
/// record carries its turn id, so a call is named by the two.
pub fn new_turn_id(prefix: &str, now_ms: u64) -> String {
    let nonce = crate::sources::random_nonce();
    format!("{prefix}{now_ms}-{}", &nonce[..12])
}

#[cfg(test)]
mod tests {
    #[test]
    fn turn_ids_of_one_millisecond_differ_and_sort_by_time() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| super::new_turn_id("t", 5)).collect();
        assert_eq!(ids.len(), 1000);
        assert!(super::new_turn_id("t", 1_000) < super::new_turn_id("t", 2_000));
        assert!(ids.iter().all(|id| id.starts_with("t5-") && id.len() == "t5-".len() + 12));
    }
}

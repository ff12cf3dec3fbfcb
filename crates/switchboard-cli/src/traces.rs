//! Trace export for the CLI: a turn of `ask` (and each call `mcp` serves) is sent
//! as OpenTelemetry spans when the config's `telemetry` section or the standard
//! `OTEL_EXPORTER_OTLP_*` variables say where; `sessions export --otlp` sends a
//! stored session's turns after the fact. A failing exporter is a warning on
//! stderr, never a failed turn.

use std::sync::Arc;

use std::process::ExitCode;

use switchboard_core::config::Config;
use switchboard_core::sessions::{ChatSessions, SessionRecord};
use switchboard_otel::Telemetry;

use crate::Failure;

/// The exporter the config asks for, if any (a problem with it is a warning).
pub(crate) fn start(config: &Config) -> Option<Arc<Telemetry>> {
    match Telemetry::from_config(config) {
        Ok(telemetry) => telemetry.map(Arc::new),
        Err(message) => {
            eprintln!("switchboard: warning: traces are not exported: {message}");
            None
        }
    }
}

/// Sends what is queued and says so when the collector could not take it.
pub(crate) fn finish(telemetry: Option<Arc<Telemetry>>) {
    if let Some(Err(message)) = telemetry.map(|telemetry| telemetry.finish()) {
        eprintln!("switchboard: warning: {message}");
    }
}

/// `sessions export SESSION --otlp [--turn ID]`: the session's turns as traces.
pub(crate) fn export_session(
    config: &Config,
    chats: &ChatSessions,
    session: &str,
    turn: Option<&str>,
) -> Result<ExitCode, Failure> {
    let telemetry =
        Telemetry::from_config(config).map_err(|message| Failure { code: 1, message })?.ok_or_else(|| Failure {
            code: 1,
            message: "nowhere to send traces: set OTEL_EXPORTER_OTLP_ENDPOINT (or the config's telemetry.endpoint)"
                .into(),
        })?;
    let log = chats.load(session)?;
    let turns: Vec<String> = log
        .records
        .iter()
        .filter_map(|record| match record {
            SessionRecord::UserMessage { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        })
        .filter(|turn_id| turn.is_none_or(|wanted| wanted == turn_id))
        .collect();
    if turns.is_empty() {
        let what = turn.map(|turn| format!("no turn {turn:?}")).unwrap_or_else(|| "no turns".into());
        return Err(Failure { code: 1, message: format!("session {session:?} has {what}") });
    }
    let calls: usize = turns
        .iter()
        .map(|turn_id| telemetry.export_events(config, Some(session.to_string()), &log.turn_events(turn_id)))
        .sum();
    let flushed = telemetry.shutdown();
    if let Some(error) = telemetry.health().last_error.or(flushed.err()) {
        return Err(Failure { code: 1, message: format!("trace export to {} failed: {error}", telemetry.endpoint()) });
    }
    println!("exported {} turn(s), {calls} call(s) of session {session:?} to {}", turns.len(), telemetry.endpoint());
    Ok(ExitCode::SUCCESS)
}

//! `switchboard sessions rerun SESSION CALL`: one logged tool-agent call run
//! again (the same request, or `--request`), as a turn of its session marked as a
//! re-run, under the same caller's entries, limits and approvals; then the first
//! run and this one side by side: status, time, tokens, cost, and both answers.
//! Approvals are `--approve all` or denied (there is no prompt here). A signal
//! cancels the call and ends every agent it started before the program exits.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use switchboard_core::runner::ending_signal;
use switchboard_core::sessions::rerun::CallSummary;
use switchboard_core::sessions::{ChatSessions, Rerun};
use switchboard_core::{ApprovalPolicy, Dispatcher};

use crate::terminal::printable;
use crate::{load, Failure, RerunArgs};

pub(crate) fn rerun(path: &Path, data_dir: &Path, arguments: RerunArgs) -> Result<ExitCode, Failure> {
    let loaded = load(path)?;
    let chats = Arc::new(ChatSessions::open(data_dir.join("sessions"))?);
    chats.load(&arguments.session)?;
    // `t…:c2` names the turn; `c2` alone, the latest turn with such a call.
    let (of_turn, of_call) = match arguments.call.rsplit_once(':') {
        Some((turn, call)) => (Some(turn.to_string()), call.to_string()),
        None => (None, arguments.call.clone()),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure { code: 1, message: format!("cannot start the runtime: {error}") })?;
    // Traced like any turn when trace export is on (the pipeline records it).
    let telemetry = crate::traces::start(&loaded.config);
    chats.set_tracer(telemetry.clone().map(|telemetry| telemetry as Arc<dyn switchboard_core::sessions::Tracer>));
    let dispatcher = Dispatcher::new(loaded.config);
    let registry = dispatcher.runners().registry().clone();
    let policy = arguments.approve.unwrap_or(ApprovalPolicy::DenyAll);
    let turn_id = switchboard_core::sessions::new_turn_id("t", switchboard_core::event::now_ms());
    let rerun = Rerun {
        session_id: arguments.session.clone(),
        turn_id: turn_id.clone(),
        of_turn,
        of_call,
        request: arguments.request.clone(),
        context: None,
    };
    let signalled = Arc::new(AtomicI32::new(0));
    let (signal_seen, stopping) = (signalled.clone(), chats.clone());
    let outcome = runtime.block_on(async move {
        tokio::spawn(async move {
            if let Some(number) = ending_signal().await {
                signal_seen.store(number, Ordering::SeqCst);
                stopping.cancel_turn(&turn_id);
            }
        });
        chats.rerun_call(&dispatcher, rerun, policy, Arc::new(|_| {})).await
    });
    registry.shutdown();
    crate::traces::finish(telemetry);
    let outcome = outcome?;
    let signal = signalled.load(Ordering::SeqCst);
    if signal != 0 {
        eprintln!("switchboard: stopped by signal {signal}; the call was cancelled");
        return Ok(ExitCode::from(128 + signal as u8));
    }
    if arguments.json {
        println!("{}", serde_json::to_string_pretty(&outcome).expect("the outcome serializes"));
    } else {
        print!("{}", side_by_side(&outcome.original, &outcome.rerun));
    }
    Ok(ExitCode::SUCCESS)
}

fn side_by_side(first: &CallSummary, again: &CallSummary) -> String {
    let tokens = |call: &CallSummary| call.tokens.map(|tokens| tokens.to_string()).unwrap_or_else(|| "-".into());
    let cost = |call: &CallSummary| call.cost.map(|cost| format!("{cost:.4}")).unwrap_or_else(|| "-".into());
    let mut text = format!("{:<10} {:<24} {:<24}\n", "", "FIRST RUN", "RUN AGAIN");
    let row = |name: &str, a: String, b: String| format!("{name:<10} {a:<24} {b:<24}\n");
    text +=
        &row("call", format!("{}:{}", first.turn_id, first.call_id), format!("{}:{}", again.turn_id, again.call_id));
    text += &row("agent", printable(&first.agent).into_owned(), printable(&again.agent).into_owned());
    text += &row("status", first.status.as_str().into(), again.status.as_str().into());
    text += &row("time", format!("{} ms", first.duration_ms), format!("{} ms", again.duration_ms));
    text += &row("tokens", tokens(first), tokens(again));
    text += &row("cost", cost(first), cost(again));
    for (title, call) in [("first run", first), ("run again", again)] {
        text += &format!("\n--- {title} ---\n{}\n", printable(&call.text));
        if let Some(error) = &call.error {
            text += &format!("(error: {})\n", printable(error));
        }
    }
    text
}

//! `switchboard ask`: one turn, alone or in a chat session, with its events printed
//! as they happen (JSON lines or a live tree) and approvals asked at the terminal.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use switchboard_core::runner::ending_signal;
use switchboard_core::sessions::{ChatSessions, SessionTurn};
use switchboard_core::{
    ApprovalDecision, ApprovalPolicy, CallEvent, CallStatus, Dispatcher, EventKind, Session, TurnControl, TurnRequest,
};

use switchboard_otel::Telemetry;

use crate::sessions::find_or_create_session;
use crate::terminal::printable;
use crate::{load, AskArgs, EventFormat, Failure};

pub(crate) fn ask(path: &Path, data_dir: &Path, arguments: AskArgs) -> Result<ExitCode, Failure> {
    let loaded = load(path)?;
    for warning in &loaded.warnings {
        eprintln!("{}: {warning}", path.display());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure { code: 1, message: format!("cannot start the runtime: {error}") })?;
    let telemetry = crate::traces::start(&loaded.config);
    let dispatcher = Dispatcher::new(loaded.config);
    let interactive = arguments.approve.is_none() && std::io::stdin().is_terminal();
    let policy = match arguments.approve {
        Some(policy) => policy,
        None if interactive => ApprovalPolicy::Ask,
        None => ApprovalPolicy::DenyAll,
    };
    let session = match &arguments.session {
        Some(name) => {
            let chats = Arc::new(ChatSessions::open(data_dir.join("sessions"))?);
            let id = find_or_create_session(&chats, name)?;
            Some((chats, id))
        }
        None => None,
    };
    let turn_id = switchboard_core::sessions::new_turn_id("t", switchboard_core::event::now_ms());
    let control = TurnControl::new(policy, Session::default());
    // Approvals and Ctrl-C reach the turn through its control, or through the
    // session's running turns when it runs in a session.
    let steering: Steering = match &session {
        Some((chats, _)) => Steering::Session(chats.clone(), turn_id.clone()),
        None => Steering::Control(control.clone()),
    };
    let printer = Arc::new(Mutex::new(Printer::new(arguments.events)));
    let sink_printer = printer.clone();
    let (prompt_sender, prompt_receiver) = std::sync::mpsc::channel::<CallEvent>();
    let prompt_sender = Mutex::new(prompt_sender);
    let conversation = session.as_ref().map(|(_, id)| id.clone());
    let print = move |event: CallEvent| {
        if let EventKind::ApprovalRequested { .. } | EventKind::InputRequested { .. } = &event.kind {
            if interactive {
                let _ = prompt_sender.lock().unwrap().send(event.clone());
            } else if policy == ApprovalPolicy::DenyAll && arguments.approve.is_none() {
                eprintln!("switchboard: {} needs approval and nobody is at a terminal to give it: denied (pass --approve all to allow)", event.agent);
            }
        }
        sink_printer.lock().unwrap().print(&event)
    };
    let print = Telemetry::wrap(telemetry.as_ref(), &dispatcher.config(), conversation, print);
    if interactive {
        let answering = steering.clone();
        std::thread::spawn(move || prompt_for_approvals(prompt_receiver, answering));
    }
    let interrupt = steering.clone();
    let (agent, message) = (arguments.agent, arguments.message);
    let signalled = Arc::new(AtomicI32::new(0));
    let signal_seen = signalled.clone();
    let registry = dispatcher.runners().registry().clone();
    let summary = runtime.block_on(async move {
        tokio::spawn(async move {
            if let Some(number) = ending_signal().await {
                signal_seen.store(number, Ordering::SeqCst);
                interrupt.cancel_turn();
            }
        });
        match session {
            Some((chats, session_id)) => {
                let turn = SessionTurn { session_id, turn_id, agent, message };
                chats.run_turn(&dispatcher, turn, policy, print).await
            }
            None => {
                let request = TurnRequest { agent, history: Vec::new(), message };
                Ok(dispatcher.run_turn(request, Arc::new(print), control).await)
            }
        }
    })?;
    // Every agent and kept MCP stdio server still running is ended, and one that
    // ignores SIGTERM gets its SIGKILL, before this program exits.
    registry.shutdown();
    crate::traces::finish(telemetry);
    let signal = signalled.load(Ordering::SeqCst);
    if signal != 0 {
        // Cancelled like Ctrl-C: every call ended, its process groups signalled; the
        // exit code says which signal, as shells expect (130, 143, 129).
        eprintln!("switchboard: stopped by signal {signal}; the turn was cancelled");
        return Ok(ExitCode::from(128 + signal as u8));
    }
    if matches!(arguments.events, EventFormat::None | EventFormat::Pretty) {
        // A closed stdout (a pager quit early) is not an error worth a panic.
        let _ = writeln!(std::io::stdout(), "{}", printable(&summary.text));
    }
    match summary.status {
        CallStatus::Ok => Ok(ExitCode::SUCCESS),
        status => {
            let detail = summary.error.map(|error| format!("{}: {}", error.kind, error.message)).unwrap_or_default();
            Err(Failure {
                code: 1,
                message: format!("the turn of {} ended with status {}: {detail}", summary.answered_by, status.as_str()),
            })
        }
    }
}

/// How the terminal steers a running turn: through its control, or by its id in
/// the chat sessions when it runs in one.
#[derive(Clone)]
enum Steering {
    Control(TurnControl),
    Session(Arc<ChatSessions>, String),
}

impl Steering {
    fn resolve_approval(&self, call_id: &str, decision: ApprovalDecision) {
        match self {
            Steering::Control(control) => control.resolve_approval(call_id, decision),
            Steering::Session(chats, turn_id) => chats.resolve_approval(turn_id, call_id, decision),
        };
    }

    fn answer_input(&self, call_id: &str, answer: Option<String>) {
        match self {
            Steering::Control(control) => control.answer_input(call_id, answer),
            Steering::Session(chats, turn_id) => chats.answer_input(turn_id, call_id, answer),
        };
    }

    fn cancel_turn(&self) {
        match self {
            Steering::Control(control) => control.cancel_turn(),
            Steering::Session(chats, turn_id) => drop(chats.cancel_turn(turn_id)),
        }
    }
}

/// Prints events as JSON lines, or as a live indented tree in which each call's
/// streamed text is printed a whole line at a time (parallel calls interleave
/// by line, never mid-word). Every write is flushed as it happens.
struct Printer {
    format: EventFormat,
    stdout: std::io::Stdout,
    /// For `pretty`: the unfinished line of each streaming call.
    partial: std::collections::HashMap<String, String>,
}

/// Writes one line of the pretty tree, escaped (see `terminal.rs`).
macro_rules! line {
    ($out:expr, $($format:tt)*) => {{
        let text = format!($($format)*);
        let _ = writeln!($out, "{}", printable(&text));
    }};
}

impl Printer {
    fn new(format: EventFormat) -> Printer {
        Printer { format, stdout: std::io::stdout(), partial: std::collections::HashMap::new() }
    }

    fn print(&mut self, event: &CallEvent) {
        let mut out = self.stdout.lock();
        match self.format {
            EventFormat::None => {}
            EventFormat::Jsonl => {
                let _ = writeln!(out, "{}", serde_json::to_string(event).expect("events serialize"));
            }
            EventFormat::Pretty => {
                let indent = "  ".repeat(event.depth as usize);
                match &event.kind {
                    // The root's text is printed whole at the end; children's stream here.
                    EventKind::TextDelta { text } if event.depth > 0 => {
                        let partial = self.partial.entry(event.call_id.clone()).or_default();
                        partial.push_str(text);
                        while let Some(newline) = partial.find('\n') {
                            let line: String = partial.drain(..=newline).collect();
                            line!(out, "{indent}  │ {}: {}", event.agent, line.trim_end());
                        }
                    }
                    EventKind::TextDelta { .. } | EventKind::ReasoningDelta { .. } | EventKind::UsageUpdated { .. } => {
                    }
                    EventKind::CallStarted { tool_name, .. } => {
                        let via = tool_name.as_deref().map(|name| format!(" ({name})")).unwrap_or_default();
                        line!(out, "{indent}▶ {}{via}", event.agent);
                    }
                    EventKind::ToolProgress { message, .. } => {
                        line!(out, "{indent}  … {}: {message}", event.agent);
                    }
                    EventKind::Escalated { from, to, .. } => {
                        line!(out, "{indent}⇢ {from} escalated to {to}");
                    }
                    EventKind::ApprovalRequested { .. } => {
                        line!(out, "{indent}  ? {} waits for approval", event.agent);
                    }
                    EventKind::ApprovalResolved { decision, by } => {
                        line!(out, "{indent}  {}", approval_line(&event.agent, *decision, by));
                    }
                    EventKind::InputRequested { question } => {
                        line!(out, "{indent}  ? {} asks: {question}", event.agent);
                    }
                    EventKind::InputAnswered { answer, by } => match answer {
                        Some(answer) => line!(out, "{indent}  ✓ {} was answered by the {by}: {answer}", event.agent),
                        None => line!(out, "{indent}  ✗ {}: the question was declined by the {by}", event.agent),
                    },
                    EventKind::CallFinished { status, usage_total, cost_total, error, .. } => {
                        if let Some(rest) = self.partial.remove(&event.call_id).filter(|rest| !rest.trim().is_empty()) {
                            line!(out, "{indent}  │ {}: {}", event.agent, rest.trim_end());
                        }
                        let tokens =
                            usage_total.map(|usage| format!(", {} tokens", usage.total_tokens)).unwrap_or_default();
                        let cost = cost_total.map(|cost| format!(", ${cost:.4}")).unwrap_or_default();
                        let error = error
                            .as_ref()
                            .map(|error| format!(": {} ({})", error.message, error.kind.as_str().replace('_', " ")))
                            .unwrap_or_default();
                        line!(out, "{indent}■ {} {}{tokens}{cost}{error}", event.agent, status.as_str());
                    }
                }
            }
        }
        let _ = out.flush();
    }
}

/// An answered approval request in words ("researcher approved once by the policy"),
/// not the decision's wire name.
fn approval_line(agent: &str, decision: ApprovalDecision, by: &str) -> String {
    match decision {
        ApprovalDecision::ApproveOnce => format!("✓ {agent} approved once by the {by}"),
        ApprovalDecision::ApproveAlways => format!("✓ {agent} approved for the session by the {by}"),
        ApprovalDecision::Deny => format!("✗ {agent} denied by the {by}"),
    }
}

/// Asks on the terminal for each approval request and each remote agent's
/// question, one at a time.
fn prompt_for_approvals(requests: std::sync::mpsc::Receiver<CallEvent>, steering: Steering) {
    let stdin = std::io::stdin();
    for event in requests {
        if let EventKind::InputRequested { question } = &event.kind {
            // The question is a remote agent's words: shown escaped.
            let prompt = format!(
                "\n{} asks: {}\n  your answer (an empty line declines): ",
                printable(&event.agent),
                printable(question)
            );
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(prompt.as_bytes()).and_then(|_| stderr.flush());
            drop(stderr);
            let mut line = String::new();
            let read = stdin.read_line(&mut line).unwrap_or(0);
            let answer = Some(line.trim().to_string()).filter(|answer| read > 0 && !answer.is_empty());
            steering.answer_input(&event.call_id, answer);
            continue;
        }
        let EventKind::ApprovalRequested { input, limits, .. } = &event.kind else { continue };
        let request =
            input.as_ref().and_then(|input| input.get("request")).and_then(|request| request.as_str()).unwrap_or("");
        // The request is a model's words: shown escaped, like everything it writes.
        let request = printable(request);
        let decision = loop {
            let prompt = format!(
                "\nApprove the call to {} (depth {}, {} calls left in this turn)?\n  request: {request}\n  [o]nce, [a]lways for this agent, [d]eny: ",
                printable(&event.agent), limits.depth, limits.calls_left
            );
            // One write: `eprint!` writes each piece of its format separately, and
            // the event printer's lines would land between them.
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(prompt.as_bytes()).and_then(|_| stderr.flush());
            drop(stderr);
            let mut line = String::new();
            if stdin.read_line(&mut line).unwrap_or(0) == 0 {
                break ApprovalDecision::Deny;
            }
            match line.trim().to_lowercase().as_str() {
                "o" | "once" | "y" | "yes" => break ApprovalDecision::ApproveOnce,
                "a" | "always" => break ApprovalDecision::ApproveAlways,
                "d" | "deny" | "n" | "no" => break ApprovalDecision::Deny,
                _ => eprintln!("answer o, a or d"),
            }
        };
        steering.resolve_approval(&event.call_id, decision);
    }
}

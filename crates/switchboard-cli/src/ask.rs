//! `switchboard ask`: one turn, alone or in a chat session, with its events printed
//! as they happen (JSON lines or a live tree) and approvals asked at the terminal.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use switchboard_core::runner::ending_signal;
use switchboard_core::sessions::{ChatSessions, SessionTurn, Show, Tracer, TurnPipeline, TurnUpdate};
use switchboard_core::{
    ApprovalDecision, ApprovalPolicy, CallEvent, CallStatus, Dispatcher, EventKind, Session, SteerRefusal, Steering,
    TurnControl, TurnRequest,
};

use crate::terminal::printable;
use crate::{load, AskArgs, EventFormat, Failure};

/// What a turn run from the terminal asks: a new message, or an interrupted turn
/// of a session resumed (`sessions resume`).
pub(crate) enum Asked {
    Message { agent: Option<String>, message: String },
    Resume { of_turn: Option<String> },
}

pub(crate) fn ask(path: &Path, data_dir: &Path, arguments: AskArgs) -> Result<ExitCode, Failure> {
    let AskArgs { agent, approve, events, session, message } = arguments;
    run(path, data_dir, TurnArgs { approve, events, session, asked: Asked::Message { agent, message } })
}

/// A turn as the terminal runs it.
pub(crate) struct TurnArgs {
    pub approve: Option<ApprovalPolicy>,
    pub events: EventFormat,
    pub session: Option<String>,
    pub asked: Asked,
}

pub(crate) fn run(path: &Path, data_dir: &Path, arguments: TurnArgs) -> Result<ExitCode, Failure> {
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
            chats.set_tracer(telemetry.clone().map(|telemetry| telemetry as Arc<dyn Tracer>));
            let id = match &arguments.asked {
                Asked::Message { .. } => find_or_create_session(&chats, name)?,
                // A turn is resumed in the session it was interrupted in: never a new one.
                Asked::Resume { .. } => chats.load(name).map(|log| log.id)?,
            };
            Some((chats, id))
        }
        None => None,
    };
    // The turn resumed: the one named, else the session's last interrupted turn.
    let of_turn = match (&arguments.asked, &session) {
        (Asked::Resume { of_turn: Some(turn) }, _) => Some(turn.clone()),
        (Asked::Resume { of_turn: None }, Some((chats, id))) => {
            let interrupted = chats.load(id)?.interrupted();
            let last = interrupted.last().ok_or_else(|| Failure {
                code: 1,
                message: format!("session {id:?} has no interrupted turn to resume"),
            })?;
            Some(last.turn_id.clone())
        }
        _ => None,
    };
    let turn_id = switchboard_core::sessions::new_turn_id("t", switchboard_core::event::now_ms());
    let control = TurnControl::new(policy, Session::default());
    // Approvals and Ctrl-C reach the turn through its control, or through the
    // session's running turns when it runs in a session.
    let handle: TurnHandle = match &session {
        Some((chats, _)) => TurnHandle::Session(chats.clone(), turn_id.clone()),
        None => TurnHandle::Control(control.clone()),
    };
    let running = Arc::new(Mutex::new(RunningCalls::default()));
    let terminal = Arc::new(Terminal::new(handle.clone(), running.clone()));
    let printer = Arc::new(Mutex::new(Printer::new(arguments.events)));
    let sink_printer = printer.clone();
    let prompts = terminal.clone();
    let print = move |event: CallEvent| {
        running.lock().unwrap().follow(&event);
        if let EventKind::ApprovalRequested { .. } | EventKind::InputRequested { .. } = &event.kind {
            if interactive {
                prompts.ask(event.clone());
            } else if policy == ApprovalPolicy::DenyAll && arguments.approve.is_none() {
                eprintln!("switchboard: {} needs approval and nobody is at a terminal to give it: denied (pass --approve all to allow)", event.agent);
            }
        }
        sink_printer.lock().unwrap().print(&event)
    };
    // Shown after it is logged (in a session) and traced: the turn's pipeline calls this.
    let show: Show = Arc::new(move |update: TurnUpdate| {
        if let TurnUpdate::Event { event } = update {
            print(*event);
        }
    });
    let tracer = telemetry.clone().map(|telemetry| telemetry as Arc<dyn Tracer>);
    if interactive {
        // Lines typed while the turn runs answer its prompts, or steer its calls.
        std::thread::spawn(move || terminal.read_lines());
    }
    let interrupt = handle.clone();
    let asked = arguments.asked;
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
        match (session, asked) {
            (Some((chats, session_id)), Asked::Message { agent, message }) => {
                let turn = SessionTurn { session_id, turn_id, handoff_typed: agent.is_some(), agent, message };
                chats.run_turn(&dispatcher, turn, policy, show).await
            }
            (Some((chats, session_id)), Asked::Resume { .. }) => {
                let of_turn = of_turn.unwrap_or_default();
                eprintln!("switchboard: resuming turn {of_turn} of session {session_id} as {turn_id}");
                chats.resume_turn(&dispatcher, (&session_id, &of_turn, &turn_id), policy, show).await
            }
            (None, Asked::Message { agent, message }) => {
                let pipeline = TurnPipeline::unlogged(tracer.as_deref(), &dispatcher.config(), None, show);
                let request = TurnRequest { agent, history: Vec::new(), message, reuse: vec![], continuation: None };
                let outcome = dispatcher.run_turn(request, pipeline.sink(), control).await;
                pipeline.end(outcome.status, &outcome.text, &outcome.answered_by).await?;
                Ok(outcome)
            }
            (None, Asked::Resume { .. }) => unreachable!("a resumed turn always has its session"),
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
enum TurnHandle {
    Control(TurnControl),
    Session(Arc<ChatSessions>, String),
}

impl TurnHandle {
    fn resolve_approval(&self, call_id: &str, decision: ApprovalDecision) {
        match self {
            TurnHandle::Control(control) => control.resolve_approval(call_id, decision),
            TurnHandle::Session(chats, turn_id) => chats.resolve_approval(turn_id, call_id, decision),
        };
    }

    fn answer_input(&self, call_id: &str, answer: Option<String>) {
        match self {
            TurnHandle::Control(control) => control.answer_input(call_id, answer),
            TurnHandle::Session(chats, turn_id) => chats.answer_input(turn_id, call_id, answer),
        };
    }

    fn steer_call(&self, call_id: &str, message: &str) -> Result<(), SteerRefusal> {
        match self {
            TurnHandle::Control(control) => control.steer_call(call_id, message, "user"),
            TurnHandle::Session(chats, turn_id) => chats.steer_call(turn_id, call_id, message, "user"),
        }
    }

    fn cancel_turn(&self) {
        match self {
            TurnHandle::Control(control) => control.cancel_turn(),
            TurnHandle::Session(chats, turn_id) => drop(chats.cancel_turn(turn_id)),
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
                    EventKind::TextDelta { .. }
                    | EventKind::ReasoningDelta { .. }
                    | EventKind::UsageUpdated { .. }
                    | EventKind::ToolCallsAsked { .. } => {}
                    EventKind::CallStarted { tool_name, .. } => {
                        let via = tool_name.as_deref().map(|name| format!(" ({name})")).unwrap_or_default();
                        line!(out, "{indent}▶ {}{via}", event.agent);
                    }
                    EventKind::ToolProgress { message, .. } => {
                        line!(out, "{indent}  … {}: {message}", event.agent);
                    }
                    EventKind::CallSteered { message, by, taken: true, .. } => {
                        line!(out, "{indent}  ↪ {} was steered by the {by}: {message}", event.agent);
                    }
                    EventKind::CallSteered { message, by, taken: false, why: None } => {
                        line!(out, "{indent}  ✗ {} ended before it took the {by}'s message: {message}", event.agent);
                    }
                    EventKind::CallSteered { message, by, taken: false, why: Some(why) } => {
                        line!(out, "{indent}  ✗ {} did not take the {by}'s message ({why}): {message}", event.agent);
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

/// The calls of the turn still running, in the order they started, with how each
/// can be steered: what a typed line is sent to.
#[derive(Default)]
struct RunningCalls(Vec<(String, String, Steering)>);

impl RunningCalls {
    fn follow(&mut self, event: &CallEvent) {
        match &event.kind {
            EventKind::CallStarted { steering, .. } => {
                self.0.push((event.call_id.clone(), event.agent.clone(), steering.clone()))
            }
            EventKind::CallFinished { .. } => self.0.retain(|(call_id, ..)| call_id != &event.call_id),
            _ => {}
        }
    }

    /// The call a line steers: the latest started of `agent` (`@agent message`),
    /// else the latest started that can be steered, else the latest (to say why not).
    fn target(&self, agent: Option<&str>) -> Option<(String, String)> {
        let latest =
            |found: Option<&(String, String, Steering)>| found.map(|(id, agent, _)| (id.clone(), agent.clone()));
        match agent {
            Some(agent) => latest(self.0.iter().rev().find(|(_, name, _)| name == agent)),
            None => {
                let steerable =
                    |(.., steering): &&(String, String, Steering)| !matches!(steering, Steering::Not { .. });
                latest(self.0.iter().rev().find(steerable).or(self.0.last()))
            }
        }
    }
}

/// The terminal while a turn runs: approval requests and remote agents' questions
/// are asked one at a time; a line typed when none waits is sent into a running
/// call (`@agent message` to pick the agent).
struct Terminal {
    handle: TurnHandle,
    running: Arc<Mutex<RunningCalls>>,
    /// Prompts waiting for a line, the first one shown; `closed` once stdin ends.
    waiting: Mutex<(std::collections::VecDeque<CallEvent>, bool)>,
}

impl Terminal {
    fn new(handle: TurnHandle, running: Arc<Mutex<RunningCalls>>) -> Terminal {
        Terminal { handle, running, waiting: Mutex::new((Default::default(), false)) }
    }

    /// Queues a prompt; shown at once when it is the only one waiting. With stdin
    /// closed, it is answered no at once.
    fn ask(&self, event: CallEvent) {
        let mut waiting = self.waiting.lock().unwrap();
        if waiting.1 {
            return self.answer_no(&event);
        }
        waiting.0.push_back(event);
        if waiting.0.len() == 1 {
            show_prompt(&waiting.0[0]);
        }
    }

    fn read_lines(&self) {
        let stdin = std::io::stdin();
        loop {
            let mut line = String::new();
            if stdin.read_line(&mut line).unwrap_or(0) == 0 {
                let mut waiting = self.waiting.lock().unwrap();
                waiting.1 = true;
                waiting.0.drain(..).for_each(|event| self.answer_no(&event));
                return;
            }
            let mut waiting = self.waiting.lock().unwrap();
            let Some(event) = waiting.0.front().cloned() else {
                drop(waiting);
                self.steer(line.trim());
                continue;
            };
            if self.answer(&event, line.trim()) {
                waiting.0.pop_front();
                if let Some(next) = waiting.0.front() {
                    show_prompt(next);
                }
            }
        }
    }

    /// Answers `event`'s prompt with `line`; false when the line is not an answer.
    fn answer(&self, event: &CallEvent, line: &str) -> bool {
        match &event.kind {
            EventKind::InputRequested { .. } => {
                self.handle.answer_input(&event.call_id, Some(line.to_string()).filter(|line| !line.is_empty()));
                true
            }
            _ => {
                let decision = match line.to_lowercase().as_str() {
                    "o" | "once" | "y" | "yes" => ApprovalDecision::ApproveOnce,
                    "a" | "always" => ApprovalDecision::ApproveAlways,
                    "d" | "deny" | "n" | "no" => ApprovalDecision::Deny,
                    _ => {
                        say("answer o, a or d\n");
                        return false;
                    }
                };
                self.handle.resolve_approval(&event.call_id, decision);
                true
            }
        }
    }

    fn answer_no(&self, event: &CallEvent) {
        match &event.kind {
            EventKind::InputRequested { .. } => self.handle.answer_input(&event.call_id, None),
            _ => self.handle.resolve_approval(&event.call_id, ApprovalDecision::Deny),
        }
    }

    /// Sends a typed line into a running call, and says where it went.
    fn steer(&self, line: &str) {
        if line.is_empty() {
            return;
        }
        let (agent, message) = match line.strip_prefix('@').and_then(|rest| rest.split_once(char::is_whitespace)) {
            Some((agent, message)) => (Some(agent), message.trim()),
            None => (None, line),
        };
        let Some((call_id, name)) = self.running.lock().unwrap().target(agent) else {
            let which = agent.map(|agent| format!(" of {agent}")).unwrap_or_default();
            return say(&format!("switchboard: no call{} is running to send that to\n", printable(&which)));
        };
        match self.handle.steer_call(&call_id, message) {
            Ok(()) => {
                say(&format!("switchboard: sent to {}; it takes it before its next model step\n", printable(&name)))
            }
            Err(refusal) => say(&format!("switchboard: {}: {}\n", printable(&name), printable(&refusal.to_string()))),
        }
    }
}

/// Writes to stderr in one write: `eprint!` writes each piece of its format
/// separately, and the event printer's lines would land between them.
fn say(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes()).and_then(|_| stderr.flush());
}

/// Shows an approval request or a remote agent's question; what a model or a
/// remote agent wrote is shown escaped.
fn show_prompt(event: &CallEvent) {
    match &event.kind {
        EventKind::InputRequested { question } => say(&format!(
            "\n{} asks: {}\n  your answer (an empty line declines): ",
            printable(&event.agent),
            printable(question)
        )),
        EventKind::ApprovalRequested { input, limits, .. } => {
            let request = input.as_ref().and_then(|input| input.get("request")).and_then(|request| request.as_str());
            say(&format!(
                "\nApprove the call to {} (depth {}, {} calls left in this turn)?\n  request: {}\n  [o]nce, [a]lways for this agent, [d]eny: ",
                printable(&event.agent),
                limits.depth,
                limits.calls_left,
                printable(request.unwrap_or(""))
            ))
        }
        _ => {}
    }
}

/// The session `name` names: by id, else by title; a new one (titled `name`) when
/// there is none.
fn find_or_create_session(chats: &ChatSessions, name: &str) -> Result<String, Failure> {
    // Twenty `ask --session NEW` started at once make one session, not one and
    // nineteen errors: the lookup and the creation happen under the folder's lock.
    let _lock = chats.creation_lock()?;
    if chats.load(name).is_ok() {
        return Ok(name.to_string());
    }
    let titled: Vec<String> =
        chats.list()?.into_iter().filter(|summary| summary.title == name).map(|summary| summary.id).collect();
    match titled.as_slice() {
        [id] => Ok(id.clone()),
        [] => {
            let valid_id = !name.is_empty()
                && name.len() <= 64
                && name.chars().all(|character| character.is_ascii_alphanumeric() || character == '-');
            let created = if valid_id { chats.create_with_id(name, name)? } else { chats.create(name)? };
            eprintln!("switchboard: started session {} ({:?})", created.id, created.title);
            Ok(created.id)
        }
        several => Err(Failure {
            code: 1,
            message: format!(
                "{} sessions are titled {name:?} ({}); name one by its id",
                several.len(),
                several.join(", ")
            ),
        }),
    }
}

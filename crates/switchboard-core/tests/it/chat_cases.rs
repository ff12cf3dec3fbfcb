//! Turns in chat sessions (`ChatSessions`): the log receives the user's message,
//! every event before the shell sees it, and the turn's end; the next turn's
//! history and a restarted program's "approve always" answers come from the log;
//! a retracted turn is not history; exports read a turn back. And one tool-agent
//! call from outside a turn (`Dispatcher::run_tool_call`): admitted, refused and
//! approved by the same rules as a model's call.

use std::sync::{Arc, Mutex};

use switchboard_core::config::Approval;
use switchboard_core::contract::Message;
use switchboard_core::sessions::{ChatSessions, OutsideTurn, SessionError, SessionRecord, TurnUpdate};
use switchboard_core::{
    ApprovalDecision, ApprovalPolicy, CallErrorKind, CallEvent, CallStatus, Dispatcher, EventKind, ToolCallRequest,
    TurnControl,
};

use crate::support::{agent, call, config, entry, on_events, session_turn as turn, Recorder, Scripted, Step};

#[tokio::test]
async fn a_turn_in_a_session_is_logged_before_it_is_shown_and_becomes_history() {
    let folder = tempfile::tempdir().unwrap();
    let chats = Arc::new(ChatSessions::open(folder.path()).unwrap());
    let session = chats.create("Planning").unwrap();
    let dispatcher = Dispatcher::new(config(vec![agent("main")], vec![]));
    let main = Scripted::new(vec![Step::Say("first answer"), Step::Fail("down"), Step::Say("third answer")]);
    dispatcher.runners().insert("main", main.clone());

    // Every event the shell is handed is in the log already.
    let (reader, session_id) = (chats.clone(), session.id.clone());
    let unlogged = Arc::new(Mutex::new(Vec::<u64>::new()));
    let seen = unlogged.clone();
    let show = move |event: CallEvent| {
        let log = reader.load(&session_id).unwrap();
        let logged = log
            .records
            .iter()
            .any(|record| matches!(record, SessionRecord::Event { event: logged, .. } if *logged == event));
        if !logged {
            seen.lock().unwrap().push(event.seq);
        }
    };
    let first = chats
        .run_turn(&dispatcher, turn(&session.id, "t1", "first question"), ApprovalPolicy::Ask, on_events(show))
        .await;
    assert_eq!(first.unwrap().text, "first answer");
    assert_eq!(*unlogged.lock().unwrap(), Vec::<u64>::new(), "events shown before they were logged");

    let failed =
        chats.run_turn(&dispatcher, turn(&session.id, "t2", "second question"), ApprovalPolicy::Ask, on_events(|_| {}));
    let failed = failed.await.unwrap();
    assert_eq!(
        (failed.status, failed.error.map(|error| error.kind)),
        (CallStatus::Error, Some(CallErrorKind::Unreachable))
    );
    chats.retract_turn(&session.id, "t2").unwrap();
    chats
        .run_turn(&dispatcher, turn(&session.id, "t3", "third question"), ApprovalPolicy::Ask, on_events(|_| {}))
        .await
        .unwrap();

    let requests = main.requests.lock().unwrap();
    assert_eq!(requests[0].messages, vec![Message::user("first question")]);
    assert_eq!(
        requests[2].messages,
        vec![Message::user("first question"), Message::assistant("first answer"), Message::user("third question")],
        "the history is the log's: answers of ok turns, no retracted turn"
    );
    let log = chats.load(&session.id).unwrap();
    let kinds: Vec<&str> = log
        .records
        .iter()
        .filter_map(|record| match record {
            SessionRecord::UserMessage { .. } => Some("user"),
            SessionRecord::TurnEnded { .. } => Some("ended"),
            SessionRecord::Retracted { .. } => Some("retracted"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, vec!["user", "ended", "user", "ended", "retracted", "user", "ended"]);
    let exported = chats.turn_events("nosuch", "t1");
    assert!(matches!(exported, Err(SessionError::NotFound(_))), "{exported:?}");
    let events = chats.turn_events(&session.id, "t3").unwrap();
    assert!(matches!(events.last().unwrap().kind, EventKind::CallFinished { status: CallStatus::Ok, .. }));
    assert!(matches!(chats.turn_events(&session.id, "t9"), Err(SessionError::NoTurn { .. })));
    // As Markdown: the turns that count, each message and answer, none taken back.
    expect_test::expect![[r#"
        # Planning

        ## You

        first question

        ## main

        first answer

        ## You

        third question

        ## main

        third answer
    "#]]
    .assert_eq(&switchboard_core::sessions::markdown::render(&log));
}

/// An event the log cannot take is not shown, and the turn stops with the log's
/// error: the window never shows what a restart would not. (The log fails here
/// because the session is deleted mid-turn, which closes its file.)
#[tokio::test]
async fn an_event_that_cannot_be_logged_is_not_shown_and_the_turn_stops() {
    let folder = tempfile::tempdir().unwrap();
    let chats = Arc::new(ChatSessions::open(folder.path()).unwrap());
    let session = chats.create("Doomed").unwrap();
    let dispatcher = Dispatcher::new(config(vec![agent("main")], vec![]));
    let main = Scripted::new(vec![Step::Slow { deltas: 1000, pause: std::time::Duration::from_millis(1) }]);
    dispatcher.runners().insert("main", main);
    let shown = Arc::new(Mutex::new(Vec::<CallEvent>::new()));
    // What the log held when it went: events are logged in batches, each batch
    // before any of its events is shown, so the rest of the batch being shown
    // when the session is deleted is in it too.
    let logged_when_deleted = Arc::new(Mutex::new(None::<Vec<CallEvent>>));
    let (deleting, session_id, kept, logged) =
        (chats.clone(), session.id.clone(), shown.clone(), logged_when_deleted.clone());
    let show = move |event: CallEvent| {
        let deltas =
            kept.lock().unwrap().iter().filter(|event| matches!(event.kind, EventKind::TextDelta { .. })).count();
        if deltas == 2 && logged.lock().unwrap().is_none() {
            *logged.lock().unwrap() = Some(deleting.load(&session_id).unwrap().turn_events("t1"));
            deleting.delete(&session_id).unwrap();
        }
        kept.lock().unwrap().push(event);
    };
    let failed = chats.run_turn(&dispatcher, turn(&session.id, "t1", "go"), ApprovalPolicy::Ask, on_events(show)).await;
    assert!(matches!(failed, Err(SessionError::NotFound(_))), "{failed:?}");
    let shown = shown.lock().unwrap();
    // What was shown is exactly what was logged before the log went.
    let logged = logged_when_deleted.lock().unwrap().clone().expect("the session was deleted mid-turn");
    assert_eq!(*shown, logged);
    assert!(shown.len() >= 3 && shown.len() < 1000, "{}", shown.len());
    assert!(
        shown.iter().all(|event| !matches!(event.kind, EventKind::CallFinished { .. })),
        "nothing after the failure"
    );
    assert!(!chats.cancel_turn("t1"), "the turn has ended (it was stopped, not left running)");
}

#[tokio::test]
async fn approve_always_comes_back_from_the_log_after_a_restart() {
    let folder = tempfile::tempdir().unwrap();
    let mut helper_entry = entry("helper", "Helps.");
    helper_entry.approval = Some(Approval::Ask);
    let dispatcher = Dispatcher::new(config(vec![agent("main"), agent("helper")], vec![helper_entry]));
    let script = || vec![Step::Call(vec![call("agent_helper", "help")]), Step::Say("done")];
    dispatcher.runners().insert("main", Scripted::new([script(), script()].concat()));
    dispatcher.runners().insert("helper", Scripted::new(vec![Step::Say("helped"), Step::Say("helped again")]));

    let session_id = {
        let chats = Arc::new(ChatSessions::open(folder.path()).unwrap());
        let session = chats.create("Approvals").unwrap();
        let answering = chats.clone();
        let answer = move |event: CallEvent| {
            if let EventKind::ApprovalRequested { .. } = event.kind {
                assert!(answering.resolve_approval("t1", &event.call_id, ApprovalDecision::ApproveAlways));
            }
        };
        let first =
            chats.run_turn(&dispatcher, turn(&session.id, "t1", "go"), ApprovalPolicy::Ask, on_events(answer)).await;
        assert_eq!(first.unwrap().status, CallStatus::Ok);
        session.id
    };
    // A new program on the same folder: nobody answers, and none is needed.
    let chats = ChatSessions::open(folder.path()).unwrap();
    let recorder = Recorder::default();
    let sink = recorder.sink();
    let second = chats.run_turn(
        &dispatcher,
        turn(&session_id, "t2", "again"),
        ApprovalPolicy::DenyAll,
        on_events(move |event| sink(event)),
    );
    assert_eq!(second.await.unwrap().status, CallStatus::Ok);
    let events = recorder.take();
    assert!(events.iter().all(|event| !matches!(event.kind, EventKind::ApprovalRequested { .. })));
    assert!(events
        .iter()
        .any(|event| event.agent == "helper"
            && matches!(event.kind, EventKind::CallFinished { status: CallStatus::Ok, .. })));
}

#[test]
fn a_session_id_is_never_created_twice() {
    let folder = tempfile::tempdir().unwrap();
    let chats = ChatSessions::open(folder.path()).unwrap();
    chats.create_with_id("notes", "Notes").unwrap();
    chats.rename("notes", "Kept").unwrap();
    assert!(matches!(chats.create_with_id("notes", "Again"), Err(SessionError::Exists(_))));
    assert_eq!(chats.list().unwrap()[0].title, "Kept", "the existing log is untouched");
}

fn tool_call(caller: Option<&str>, agent: &str, request: &str) -> ToolCallRequest {
    ToolCallRequest {
        caller: caller.map(str::to_owned),
        agent: agent.into(),
        request: request.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn one_tool_agent_call_from_outside_follows_the_same_rules() {
    let mut denied_entry = entry("locked", "Never.");
    denied_entry.approval = Some(Approval::Deny);
    let mut main = agent("main");
    main.tools = vec![entry("private", "Only for main.")];
    let mut hidden = entry("hidden", "Off.");
    hidden.enabled = Some(false);
    let config = config(
        vec![main, agent("helper"), agent("private"), agent("locked"), agent("hidden")],
        vec![entry("helper", "Helps."), denied_entry, hidden],
    );
    let dispatcher = Dispatcher::new(config).with_sources(Arc::new(|| 7), Arc::new(|| "NONCE".into()));
    dispatcher.runners().insert("helper", Scripted::new(vec![Step::Say("helped")]));
    dispatcher.runners().insert("private", Scripted::new(vec![Step::Say("private answer")]));

    let recorder = Recorder::default();
    let outcome = dispatcher
        .run_tool_call(tool_call(None, "helper", "please"), recorder.sink(), TurnControl::approving_all())
        .await;
    assert_eq!((outcome.status, outcome.text.as_str(), outcome.steps), (CallStatus::Ok, "helped", 1));
    assert!(outcome.delivered.contains("helped") && outcome.delivered.ends_with("<<<END_AGENT_RESULT NONCE>>>"));
    assert_eq!(outcome.usage.map(|usage| usage.total_tokens), Some(15));
    let events = recorder.take();
    assert_eq!((events[0].depth, events[0].parent_id.as_deref()), (1, None), "a tool call stands at depth 1");
    assert!(matches!(events.last().unwrap().kind, EventKind::CallFinished { status: CallStatus::Ok, .. }));

    let as_main = dispatcher
        .run_tool_call(
            tool_call(Some("main"), "private", "hi"),
            Recorder::default().sink(),
            TurnControl::approving_all(),
        )
        .await;
    assert_eq!(as_main.text, "private answer", "the caller's own entries apply");
    let refusals = [
        (tool_call(None, "private", "hi"), CallStatus::Limited, CallErrorKind::NotOffered),
        (tool_call(None, "hidden", "hi"), CallStatus::Limited, CallErrorKind::NotOffered),
        (tool_call(None, "nobody", "hi"), CallStatus::Error, CallErrorKind::UnknownAgent),
        (tool_call(None, "locked", "hi"), CallStatus::Denied, CallErrorKind::Denied),
        (tool_call(Some("main"), "main", "hi"), CallStatus::Limited, CallErrorKind::Cycle),
    ];
    for (request, status, kind) in refusals {
        let agent = request.agent.clone();
        let recorder = Recorder::default();
        let outcome = dispatcher.run_tool_call(request, recorder.sink(), TurnControl::approving_all()).await;
        assert_eq!((outcome.status, outcome.error.map(|error| error.kind)), (status, Some(kind)), "{agent}");
        assert!(
            outcome.delivered.contains(kind.as_str()),
            "the fenced result names the refusal: {}",
            outcome.delivered
        );
        assert_eq!(recorder.take().len(), 2, "{agent}: a refused call is one node, started and finished");
    }
}

#[tokio::test]
async fn a_tool_call_from_outside_waits_for_approval_like_any_other() {
    let mut asking = entry("helper", "Helps.");
    asking.approval = Some(Approval::Ask);
    let dispatcher = Dispatcher::new(config(vec![agent("helper")], vec![asking]));
    dispatcher.runners().insert("helper", Scripted::new(vec![Step::Say("helped")]));
    let denied = dispatcher
        .run_tool_call(
            tool_call(None, "helper", "x"),
            Recorder::default().sink(),
            TurnControl::new(ApprovalPolicy::DenyAll, Default::default()),
        )
        .await;
    assert_eq!(
        (denied.status, denied.error.map(|error| error.kind)),
        (CallStatus::Denied, Some(CallErrorKind::Denied))
    );
    let control = TurnControl::new(ApprovalPolicy::Ask, Default::default());
    let answering = control.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event: CallEvent| {
        if let EventKind::ApprovalRequested { .. } = event.kind {
            assert!(answering.resolve_approval(&event.call_id, ApprovalDecision::ApproveOnce));
        }
    });
    let approved = dispatcher.run_tool_call(tool_call(None, "helper", "x"), sink, control).await;
    assert_eq!(approved.text, "helped");
}

#[tokio::test]
async fn an_outside_call_is_a_turn_of_its_session_steered_by_its_turn_id() {
    let folder = tempfile::tempdir().unwrap();
    let chats = Arc::new(ChatSessions::open(folder.path()).unwrap());
    chats.ensure("mcp-calls", "MCP calls").unwrap();
    chats.ensure("mcp-calls", "MCP calls").unwrap(); // a second time: kept, not an error
    let mut asking = entry("helper", "Helps.");
    asking.approval = Some(Approval::Ask);
    let dispatcher = Dispatcher::new(config(vec![agent("helper")], vec![asking]));
    dispatcher.runners().insert("helper", Scripted::new(vec![Step::Say("helped")]));

    let turn = OutsideTurn { session_id: "mcp-calls".into(), turn_id: "mcp-1".into() };
    let control = TurnControl::new(ApprovalPolicy::Ask, Default::default());
    // The approval is answered by turn id, as the window answers a turn's.
    let steering = chats.clone();
    let updates = Arc::new(Mutex::new(Vec::<TurnUpdate>::new()));
    let seen = updates.clone();
    let show: switchboard_core::sessions::Show = Arc::new(move |update: TurnUpdate| {
        if let TurnUpdate::Event { event } = &update {
            if let EventKind::ApprovalRequested { .. } = event.kind {
                assert!(steering.resolve_approval("mcp-1", &event.call_id, ApprovalDecision::ApproveOnce));
            }
        }
        seen.lock().unwrap().push(update);
    });
    let line = ("MCP client probe → agent_helper: x", "helper");
    let pipeline = chats.begin_outside_turn(&dispatcher.config(), &turn, line, &control, show).unwrap();
    let outcome = dispatcher.run_tool_call(tool_call(None, "helper", "x"), pipeline.sink(), control).await;
    pipeline.end(outcome.status, &outcome.text, "helper").await.unwrap();
    // Shown in order: its start, its events, its end (each after it was logged).
    let updates = updates.lock().unwrap();
    assert!(matches!(updates.first(), Some(TurnUpdate::Started { agent, .. }) if agent == "helper"), "{updates:?}");
    assert!(matches!(updates.last(), Some(TurnUpdate::Finished { text, .. }) if text == "helped"), "{updates:?}");
    assert_eq!(outcome.text, "helped");
    assert!(!chats.cancel_turn("mcp-1"), "an ended outside turn can no longer be steered");

    let log = chats.load("mcp-calls").unwrap();
    let kinds: Vec<&str> = log
        .records
        .iter()
        .map(|record| match record {
            SessionRecord::UserMessage { .. } => "user",
            SessionRecord::Event { .. } => "event",
            SessionRecord::TurnEnded { .. } => "ended",
            _ => "other",
        })
        .filter(|kind| *kind != "other")
        .collect();
    assert_eq!(kinds.first(), Some(&"user"));
    assert_eq!(kinds.last(), Some(&"ended"));
    assert!(
        kinds.iter().filter(|kind| **kind == "event").count() >= 4,
        "started, approval asked and answered, finished"
    );
    assert_eq!(log.history(), vec![Message::user("MCP client probe → agent_helper: x"), Message::assistant("helped")]);
}

/// A slash command's note is kept in the session's log as the chat showed it: cut
/// at `NOTE_BYTES` (at a character boundary), an unknown outcome read as `done`.
#[test]
fn a_command_note_is_kept_in_the_log_cut_to_its_limit() {
    use switchboard_core::sessions::NOTE_BYTES;
    let folder = tempfile::tempdir().unwrap();
    let chats = ChatSessions::open(folder.path()).unwrap();
    let session = chats.create("Notes").unwrap();
    chats.log_command_note(&session.id, "/agent switch boss", "done", "boss is now the primary agent.", 5).unwrap();
    let long = "é".repeat(NOTE_BYTES);
    chats.log_command_note(&session.id, "/agent tool list", "strange", &long, 6).unwrap();
    let notes: Vec<(String, String, usize)> = chats
        .load(&session.id)
        .unwrap()
        .records
        .into_iter()
        .filter_map(|record| match record {
            SessionRecord::CommandNote { command, outcome, text, .. } => Some((command, outcome, text.len())),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes,
        vec![
            ("/agent switch boss".into(), "done".into(), "boss is now the primary agent.".len()),
            ("/agent tool list".into(), "done".into(), NOTE_BYTES),
        ]
    );
    assert!(matches!(chats.log_command_note("nosuch", "/x", "done", "y", 1), Err(SessionError::NotFound(_))));
}

/// A logged call run again: the same caller's entry applies, the request can be
/// sharpened, the new turn is marked as a re-run (and is not history), both calls
/// come back summed up alike; and a call the config now denies is denied again.
#[tokio::test]
async fn a_logged_call_runs_again_beside_the_first_under_the_same_rules() {
    use switchboard_core::sessions::Rerun;
    let folder = tempfile::tempdir().unwrap();
    let chats = ChatSessions::open(folder.path()).unwrap();
    let session = chats.create("Rerun").unwrap();
    let mut config = config(vec![agent("boss"), agent("worker")], vec![entry("worker", "Works.")]);
    let dispatcher = Dispatcher::new(config.clone());
    dispatcher.runners().insert(
        "boss",
        Scripted::new(vec![Step::Call(vec![call("agent_worker", "sum it up")]), Step::Say("boss done")]),
    );
    let worker = Scripted::new(vec![Step::Say("a long rambling summary"), Step::Say("short")]);
    dispatcher.runners().insert("worker", worker.clone());
    chats
        .run_turn(&dispatcher, turn(&session.id, "t1", "go"), ApprovalPolicy::ApproveAll, on_events(|_| {}))
        .await
        .unwrap();

    let again = Rerun {
        session_id: session.id.clone(),
        turn_id: "t2".into(),
        of_turn: None,
        of_call: "c2".into(),
        request: Some("sum it up in one word".into()),
        context: None,
    };
    let updates = Arc::new(Mutex::new(Vec::<TurnUpdate>::new()));
    let seen = updates.clone();
    let show: switchboard_core::sessions::Show = Arc::new(move |update| seen.lock().unwrap().push(update));
    let outcome = chats.rerun_call(&dispatcher, again, ApprovalPolicy::ApproveAll, show).await.unwrap();
    // The shell is shown the re-run as a turn: its start line first, its end last.
    let updates = updates.lock().unwrap().clone();
    let Some(TurnUpdate::Started { line, agent }) = updates.first() else { panic!("starts: {updates:?}") };
    assert_eq!(agent, &outcome.original.agent);
    assert!(line.starts_with("Run again:"), "{line}");
    let Some(TurnUpdate::Finished { text, .. }) = updates.last() else { panic!("ends: {updates:?}") };
    assert_eq!(text, &outcome.rerun.text);
    assert_eq!((outcome.original.turn_id.as_str(), outcome.original.agent.as_str()), ("t1", "worker"));
    assert_eq!((outcome.original.text.as_str(), outcome.rerun.text.as_str()), ("a long rambling summary", "short"));
    assert_eq!((outcome.original.status, outcome.rerun.status), (CallStatus::Ok, CallStatus::Ok));
    assert_eq!((outcome.original.tokens, outcome.rerun.tokens), (Some(15), Some(15)));
    let last_user = {
        let asked = worker.requests.lock().unwrap();
        asked[1].messages.iter().rev().find_map(|message| match message {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })
    };
    assert!(last_user.unwrap().contains("sum it up in one word"));

    let log = chats.load(&session.id).unwrap();
    assert!(log.records.iter().any(|record| matches!(
        record,
        SessionRecord::Rerun { turn_id, of_turn, of_call } if turn_id == "t2" && of_turn == "t1" && of_call == "c2"
    )));
    let history = chats.load(&session.id).unwrap().history();
    assert_eq!(history.len(), 2, "the re-run is not history: {history:?}");

    // The config now denies calls to the worker: a re-run is denied like any call.
    config.agents[1].approval = Some(Approval::Deny);
    dispatcher.replace_config(config, &[]);
    let denied = Rerun {
        turn_id: "t3".into(),
        of_turn: Some("t1".into()),
        request: None,
        ..Rerun {
            session_id: session.id.clone(),
            turn_id: String::new(),
            of_turn: None,
            of_call: "c2".into(),
            request: None,
            context: None,
        }
    };
    let outcome = chats.rerun_call(&dispatcher, denied, ApprovalPolicy::ApproveAll, on_events(|_| {})).await.unwrap();
    assert_eq!(outcome.rerun.status, CallStatus::Denied);
    let missing = Rerun {
        turn_id: "t4".into(),
        of_turn: None,
        of_call: "c9".into(),
        request: None,
        context: None,
        session_id: session.id.clone(),
    };
    let shown = Arc::new(Mutex::new(0));
    let counted = shown.clone();
    let show: switchboard_core::sessions::Show = Arc::new(move |_| *counted.lock().unwrap() += 1);
    let error = chats.rerun_call(&dispatcher, missing, ApprovalPolicy::ApproveAll, show).await.unwrap_err();
    assert_eq!(*shown.lock().unwrap(), 0, "a call that is not in the log never begins");
    assert!(matches!(error, SessionError::NoCall { .. }), "{error}");
}

/// A tracer that checks each event it is given is in the session's log already.
struct LogCheckingTracer {
    chats: Arc<ChatSessions>,
    session_id: String,
    traced: Arc<Mutex<Vec<(u64, bool)>>>,
}

struct LogCheckingTrace {
    chats: Arc<ChatSessions>,
    session_id: String,
    traced: Arc<Mutex<Vec<(u64, bool)>>>,
}

impl switchboard_core::sessions::Tracer for LogCheckingTracer {
    fn turn(
        &self,
        _config: &switchboard_core::Config,
        conversation: Option<&str>,
    ) -> Box<dyn switchboard_core::sessions::TurnTrace> {
        assert_eq!(conversation, Some(self.session_id.as_str()), "a turn is traced as its session's");
        Box::new(LogCheckingTrace {
            chats: self.chats.clone(),
            session_id: self.session_id.clone(),
            traced: self.traced.clone(),
        })
    }
}

impl switchboard_core::sessions::TurnTrace for LogCheckingTrace {
    fn record(&self, event: &CallEvent) {
        let logged = self.chats.load(&self.session_id).unwrap().turn_events("t1").contains(event);
        self.traced.lock().unwrap().push((event.seq, logged));
    }
}

#[tokio::test]
async fn every_event_is_logged_then_traced_then_shown() {
    let folder = tempfile::tempdir().unwrap();
    let chats = Arc::new(ChatSessions::open(folder.path()).unwrap());
    let session = chats.create("Traced").unwrap();
    let dispatcher = Dispatcher::new(config(vec![agent("boss"), agent("worker")], vec![entry("worker", "Works.")]));
    dispatcher
        .runners()
        .insert("boss", Scripted::new(vec![Step::Call(vec![call("agent_worker", "do it")]), Step::Say("boss done")]));
    dispatcher.runners().insert("worker", Scripted::new(vec![Step::Say("worked")]));
    let traced = Arc::new(Mutex::new(Vec::new()));
    let tracer = LogCheckingTracer { chats: chats.clone(), session_id: session.id.clone(), traced: traced.clone() };
    chats.set_tracer(Some(Arc::new(tracer)));

    let (seen_traced, shown) = (traced.clone(), Arc::new(Mutex::new(Vec::<(u64, bool)>::new())));
    let showing = shown.clone();
    let show = on_events(move |event: CallEvent| {
        let traced_first = seen_traced.lock().unwrap().iter().any(|(seq, _)| *seq == event.seq);
        showing.lock().unwrap().push((event.seq, traced_first));
    });
    let outcome = chats.run_turn(&dispatcher, turn(&session.id, "t1", "go"), ApprovalPolicy::ApproveAll, show).await;
    assert_eq!(outcome.unwrap().text, "boss done");

    let logged = chats.turn_events(&session.id, "t1").unwrap();
    let traced = traced.lock().unwrap().clone();
    let shown = shown.lock().unwrap().clone();
    assert!(logged.len() >= 6, "a turn with a delegate: {}", logged.len());
    assert_eq!(traced.len(), logged.len(), "every event traced");
    assert!(traced.iter().all(|(_, logged)| *logged), "an event was traced before it was logged: {traced:?}");
    assert_eq!(shown.len(), logged.len(), "every event shown");
    assert!(shown.iter().all(|(_, traced)| *traced), "an event was shown before it was traced: {shown:?}");
    let order: Vec<u64> = shown.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(order, (1..=logged.len() as u64).collect::<Vec<_>>(), "shown in order");
}

//! Resuming an interrupted turn: the calls it had finished are handed back from the
//! log (their agent is not asked again, their usage not counted again), the call
//! that was running runs again, the new turn names the one it resumes and stands
//! in its place in the history; a turn that is not interrupted is not resumed.

use std::sync::{Arc, Mutex};

use serde_json::json;
use switchboard_core::event::{CallEvent, CallRole, CallStatus, EventKind, Steering};
use switchboard_core::sessions::interrupted::TurnProcess;
use switchboard_core::sessions::{ChatSessions, SessionError, SessionRecord, SessionStore};
use switchboard_core::{ApprovalPolicy, Dispatcher};

use crate::support::{agent, call, config, entry, on_events, Scripted, Step};

fn event(seq: u64, call: &str, parent: Option<&str>, agent: &str, kind: EventKind) -> SessionRecord {
    let depth = u32::from(parent.is_some());
    let event = CallEvent {
        seq,
        ts_ms: seq,
        call_id: call.into(),
        parent_id: parent.map(str::to_string),
        agent: agent.into(),
        depth,
        kind,
    };
    SessionRecord::Event { turn_id: "t1".into(), event }
}

fn started(role: CallRole, tool: Option<&str>, request: Option<&str>) -> EventKind {
    EventKind::CallStarted {
        role,
        tool_name: tool.map(str::to_string),
        input: request.map(|request| json!({ "request": request })),
        tools: vec![],
        model: None,
        steering: Steering::default(),
    }
}

/// The message of turn t1, as a process that was killed left it.
fn interrupted_message(text: &str) -> SessionRecord {
    SessionRecord::UserMessage {
        turn_id: "t1".into(),
        text: text.into(),
        agent: None,
        handoff: None,
        process: Some(TurnProcess { pid: u32::MAX, started: 1 }),
        ts_ms: 2,
    }
}

/// A model step of the primary that asked fast one thing (`quick`) as tool call `id`.
fn fast_asked(id: &str) -> EventKind {
    EventKind::ToolCallsAsked {
        calls: vec![switchboard_core::event::AskedCall {
            id: id.into(),
            name: "agent_fast".into(),
            arguments: json!({ "request": "quick" }).to_string(),
        }],
    }
}

/// A delegate's call that ended `ok` with `result` (and `delivered`, its fenced form).
fn finished_ok(result: &str, delivered: Option<&str>) -> EventKind {
    EventKind::CallFinished {
        status: CallStatus::Ok,
        result: Some(result.into()),
        usage: None,
        usage_total: None,
        cost: None,
        cost_total: None,
        steps: 1,
        error: None,
        delivered: delivered.map(str::to_string),
    }
}

/// A log with turn t1 of `folder`'s session "s" as a killed process left it: the
/// boss called fast and slow at once; fast had answered, slow was still running.
fn interrupted_session(folder: &std::path::Path) {
    let store = SessionStore::open(folder).unwrap();
    store.create("s", "Interrupted", 1).unwrap();
    let finished = finished_ok("fast answer", None);
    let records = vec![
        interrupted_message("do both"),
        event(1, "c1", None, "boss", started(CallRole::Turn, None, None)),
        event(2, "c2", Some("c1"), "fast", started(CallRole::Tool, Some("agent_fast"), Some("quick"))),
        event(3, "c3", Some("c1"), "slow", started(CallRole::Tool, Some("agent_slow"), Some("long"))),
        event(4, "c2", Some("c1"), "fast", finished),
    ];
    store.append_all("s", &records).unwrap();
}

fn dispatcher() -> (Dispatcher, Arc<Scripted>, Arc<Scripted>, Arc<Scripted>) {
    let dispatcher = Dispatcher::new(config(
        vec![agent("boss"), agent("fast"), agent("slow")],
        vec![entry("fast", "Quick."), entry("slow", "Slow.")],
    ));
    let boss = Scripted::new(vec![
        Step::Call(vec![call("agent_fast", "quick"), call("agent_slow", "long")]),
        Step::Say("both done"),
    ]);
    let (fast, slow) = (Scripted::new(vec![Step::Say("fast again")]), Scripted::new(vec![Step::Say("slow answer")]));
    dispatcher.runners().insert("boss", boss.clone());
    dispatcher.runners().insert("fast", fast.clone());
    dispatcher.runners().insert("slow", slow.clone());
    (dispatcher, boss, fast, slow)
}

#[tokio::test]
async fn a_resumed_turn_hands_back_what_finished_and_runs_what_was_running() {
    let folder = tempfile::tempdir().unwrap();
    interrupted_session(folder.path());
    let chats = ChatSessions::open(folder.path()).unwrap();
    assert_eq!(chats.load("s").unwrap().interrupted().len(), 1);
    let (dispatcher, boss, fast, slow) = dispatcher();
    let shown = Arc::new(Mutex::new(Vec::<CallEvent>::new()));
    let seen = shown.clone();
    let show = on_events(move |event| seen.lock().unwrap().push(event));

    let outcome = chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::ApproveAll, show).await.unwrap();
    assert_eq!((outcome.status, outcome.text.as_str()), (CallStatus::Ok, "both done"));
    assert!(fast.requests.lock().unwrap().is_empty(), "the finished delegate is not asked again");
    assert_eq!(slow.requests.lock().unwrap().len(), 1, "the delegate that was running runs again");
    // The primary gets the kept answer as the tool result, fenced as any is.
    let second = boss.requests.lock().unwrap()[1].clone();
    let results = format!("{:?}", second.messages);
    assert!(results.contains("fast answer") && results.contains("slow answer"), "{results}");

    let events = shown.lock().unwrap().clone();
    let fast_node: Vec<&CallEvent> = events.iter().filter(|event| event.agent == "fast").collect();
    let kept = fast_node.iter().find_map(|event| match &event.kind {
        EventKind::ToolProgress { data: Some(data), .. } => data.get("reused").cloned(),
        _ => None,
    });
    assert_eq!(kept, Some(json!({ "turn": "t1", "call": "c2" })), "the node says where its answer comes from");
    let fast_end = fast_node.iter().find_map(|event| match &event.kind {
        EventKind::CallFinished { status, usage, cost, .. } => Some((*status, *usage, *cost)),
        _ => None,
    });
    assert_eq!(fast_end, Some((CallStatus::Ok, None, None)), "no usage or cost counted twice");

    let log = chats.load("s").unwrap();
    assert!(log.records.iter().any(|record| matches!(record,
        SessionRecord::Resumed { turn_id, of_turn } if turn_id == "t2" && of_turn == "t1")));
    assert!(log.interrupted().is_empty(), "the resumed turn is no longer open");
    assert_eq!(log.history().len(), 2, "the message once, and the answer: {:?}", log.history());
    assert_eq!(chats.list().unwrap()[0].turns, 1);
    // The report counts fast's call once (where it ran), and the resumed turn once.
    let report = chats.report(Default::default()).unwrap();
    let calls = |name: &str| report.agents.iter().find(|agent| agent.agent == name).map(|agent| agent.calls);
    assert_eq!((calls("fast"), calls("slow"), report.turns), (Some(1), Some(1), 1), "{report:?}");
    // Once resumed, it is not resumed again, and nothing runs.
    let again = chats.resume_turn(&dispatcher, ("s", "t1", "t3"), ApprovalPolicy::ApproveAll, on_events(|_| {})).await;
    assert!(
        matches!(&again, Err(SessionError::NotResumable { why, .. }) if why.contains("resumed already, as turn \"t2\"")),
        "{again:?}"
    );
    let ended = chats.resume_turn(&dispatcher, ("s", "t2", "t4"), ApprovalPolicy::ApproveAll, on_events(|_| {})).await;
    assert!(
        matches!(&ended, Err(SessionError::NotResumable { why, .. }) if why.contains("it ended (ok)")),
        "{ended:?}"
    );
    assert_eq!(slow.requests.lock().unwrap().len(), 1, "a refused resume runs nothing");
}

#[tokio::test]
async fn a_call_asked_differently_runs_and_the_kept_answer_is_not_used() {
    let folder = tempfile::tempdir().unwrap();
    interrupted_session(folder.path());
    let chats = ChatSessions::open(folder.path()).unwrap();
    let (dispatcher, _, _, _) = dispatcher();
    let boss = Scripted::new(vec![Step::Call(vec![call("agent_fast", "quick, but sharper")]), Step::Say("done")]);
    let fast = Scripted::new(vec![Step::Say("a new answer")]);
    dispatcher.runners().insert("boss", boss);
    dispatcher.runners().insert("fast", fast.clone());
    let outcome =
        chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::ApproveAll, on_events(|_| {})).await;
    assert_eq!(outcome.unwrap().status, CallStatus::Ok);
    assert_eq!(fast.requests.lock().unwrap().len(), 1, "another request is a new call: it runs");
}

/// An approval nobody had answered when the process died is said with the turn, and
/// asked again, with the same request, when the turn is resumed.
#[tokio::test]
async fn an_approval_that_was_waiting_is_asked_again_on_resume() {
    let folder = tempfile::tempdir().unwrap();
    let store = SessionStore::open(folder.path()).unwrap();
    store.create("s", "Waiting", 1).unwrap();
    let asked = EventKind::ApprovalRequested {
        tool_name: "agent_slow".into(),
        input: Some(json!({ "request": "long" })),
        limits: switchboard_core::event::ApprovalLimits {
            may_delegate: false,
            depth: 1,
            max_depth: 2,
            calls_left: 5,
            timeout_secs: None,
        },
    };
    let records = vec![
        interrupted_message("do both"),
        event(1, "c1", None, "boss", started(CallRole::Turn, None, None)),
        event(2, "c3", Some("c1"), "slow", started(CallRole::Tool, Some("agent_slow"), Some("long"))),
        event(3, "c3", Some("c1"), "slow", asked),
    ];
    store.append_all("s", &records).unwrap();
    let chats = Arc::new(ChatSessions::open(folder.path()).unwrap());
    let waiting = &chats.load("s").unwrap().interrupted()[0].waiting;
    assert_eq!(
        waiting
            .iter()
            .map(|approval| (approval.agent.as_str(), approval.asked_by.as_deref(), approval.request.as_str()))
            .collect::<Vec<_>>(),
        [("slow", Some("boss"), "long")]
    );

    let mut config = config(vec![agent("boss"), agent("slow")], vec![entry("slow", "Slow.")]);
    config.agent_tools[0].approval = Some(switchboard_core::Approval::Ask);
    let dispatcher = Dispatcher::new(config);
    dispatcher
        .runners()
        .insert("boss", Scripted::new(vec![Step::Call(vec![call("agent_slow", "long")]), Step::Say("done")]));
    dispatcher.runners().insert("slow", Scripted::new(vec![Step::Say("slow answer")]));
    let (answering, asked_again) = (chats.clone(), Arc::new(Mutex::new(Vec::new())));
    let seen = asked_again.clone();
    let show = on_events(move |event| {
        if let EventKind::ApprovalRequested { input, .. } = &event.kind {
            seen.lock().unwrap().push((event.agent.clone(), input.clone()));
            let decision = switchboard_core::ApprovalDecision::ApproveOnce;
            assert!(answering.resolve_approval("t2", &event.call_id, decision));
        }
    });
    let outcome = chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::Ask, show).await.unwrap();
    assert_eq!((outcome.status, outcome.text.as_str()), (CallStatus::Ok, "done"));
    assert_eq!(*asked_again.lock().unwrap(), [("slow".to_string(), Some(json!({ "request": "long" })))]);
}

/// With its steps in the log, the primary picks up after its last model step: it
/// is asked once more, with its earlier step and the calls' answers, not from the
/// start; the call that had finished is handed back, the one that ran runs.
#[tokio::test]
async fn the_primary_picks_up_after_its_last_step_and_is_not_asked_that_step_again() {
    let folder = tempfile::tempdir().unwrap();
    interrupted_session(folder.path());
    let store = SessionStore::open(folder.path()).unwrap();
    let asked = EventKind::ToolCallsAsked {
        calls: vec![
            switchboard_core::event::AskedCall {
                id: "tc0".into(),
                name: "agent_fast".into(),
                arguments: json!({ "request": "quick" }).to_string(),
            },
            switchboard_core::event::AskedCall {
                id: "tc1".into(),
                name: "agent_slow".into(),
                arguments: json!({ "request": "long" }).to_string(),
            },
        ],
    };
    // The same turn, as this version logs it: the step's text and tool calls come
    // before its children start.
    let mut records = store.load("s").unwrap().records;
    let text = event(1, "c1", None, "boss", EventKind::TextDelta { text: "Asking both. ".into() });
    let position = records
        .iter()
        .position(|record| matches!(record, SessionRecord::Event { event, .. } if event.call_id == "c2"))
        .unwrap();
    records.insert(position, event(1, "c1", None, "boss", asked));
    records.insert(position, text);
    std::fs::remove_file(folder.path().join("s.jsonl")).unwrap();
    store.create("s", "Interrupted", 1).unwrap();
    store.append_all("s", &records[1..]).unwrap();

    let chats = ChatSessions::open(folder.path()).unwrap();
    let (dispatcher, _, fast, slow) = dispatcher();
    let boss = Scripted::new(vec![Step::Say("both done")]);
    dispatcher.runners().insert("boss", boss.clone());
    let shown = Arc::new(Mutex::new(Vec::<CallEvent>::new()));
    let seen = shown.clone();
    let show = on_events(move |event| seen.lock().unwrap().push(event));
    let outcome = chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::ApproveAll, show).await.unwrap();
    assert_eq!((outcome.status, outcome.text.as_str()), (CallStatus::Ok, "both done"));
    let requests = boss.requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "the primary is asked once: its first step is not asked again");
    let messages = format!("{:?}", requests[0].messages);
    assert!(messages.contains("Asking both.") && messages.contains("tc0") && messages.contains("tc1"), "{messages}");
    assert!(messages.contains("fast answer") && messages.contains("slow answer"), "{messages}");
    assert!(fast.requests.lock().unwrap().is_empty(), "the finished delegate is not asked again");
    assert_eq!(slow.requests.lock().unwrap().len(), 1);
    let events = shown.lock().unwrap();
    let picked_up = events.iter().find_map(|event| match &event.kind {
        EventKind::ToolProgress { data: Some(data), .. } => data.get("continued").cloned(),
        _ => None,
    });
    assert_eq!(picked_up, Some(json!({ "turn": "t1", "steps": 1 })));
}

/// A call that was running as a task of its agent's server (its progress named the
/// task) follows that task on resume: its runner is handed the task's id (the
/// `mcp` and `a2a` runners poll it instead of asking again), and its node says
/// which call started it. An id the log holds that no request could carry (too
/// long, or not visible ASCII) is not handed on: the call is simply asked again.
#[tokio::test]
async fn a_call_that_was_running_as_a_remote_task_follows_that_task() {
    for (logged, handed) in [
        (json!({ "task": { "id": "task-7", "ttl_ms": 3_600_000, "server": "http://b/mcp" } }), Some("task-7")),
        (json!({ "a2a_task": "a2a-9", "server": "http://b/a2a" }), Some("a2a-9")),
        (json!({ "task": { "id": "x".repeat(300), "server": "http://b/mcp" } }), None),
        (json!({ "a2a_task": "bad\nid", "server": "http://b/a2a" }), None),
        // Where it was started is not known: the id goes nowhere.
        (json!({ "task": { "id": "task-7" } }), None),
        (json!({ "a2a_task": "a2a-9" }), None),
        (json!({ "a2a_state": "TASK_STATE_WORKING" }), None),
    ] {
        let folder = tempfile::tempdir().unwrap();
        interrupted_session(folder.path());
        let progress =
            EventKind::ToolProgress { message: "the server runs the call as task".into(), data: Some(logged) };
        SessionStore::open(folder.path())
            .unwrap()
            .append_all("s", &[event(5, "c3", Some("c1"), "slow", progress)])
            .unwrap();
        let chats = ChatSessions::open(folder.path()).unwrap();
        let (dispatcher, _, fast, slow) = dispatcher();
        let shown = Arc::new(Mutex::new(Vec::<CallEvent>::new()));
        let seen = shown.clone();
        let show = on_events(move |event| seen.lock().unwrap().push(event));
        let outcome = chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::ApproveAll, show).await;
        assert_eq!(outcome.unwrap().status, CallStatus::Ok);
        assert!(fast.requests.lock().unwrap().is_empty());
        let requests = slow.requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1, "the running call runs once, following its task or asked again");
        assert_eq!(requests[0].remote_task.as_ref().map(|task| task.id.as_str()), handed);
        let followed = shown.lock().unwrap().iter().find_map(|event| match &event.kind {
            EventKind::ToolProgress { data: Some(data), .. } if event.agent == "slow" => {
                data.get("reattached").cloned()
            }
            _ => None,
        });
        let expected = handed.map(|task| json!({ "turn": "t1", "call": "c3", "task": task }));
        assert_eq!(followed, expected, "the node names the call whose task it follows");
    }
}

/// When the primary picks up after its last step, only that step's calls are kept:
/// an earlier step's answer does not stand for a later call asked the same thing
/// (the earlier answer is in the primary's messages already).
#[tokio::test]
async fn an_earlier_steps_answer_does_not_stand_for_the_last_steps_call() {
    let folder = tempfile::tempdir().unwrap();
    let store = SessionStore::open(folder.path()).unwrap();
    store.create("s", "Asked twice", 1).unwrap();
    let finished = finished_ok("the first answer", Some("the first answer, fenced"));
    let records = vec![
        interrupted_message("check twice"),
        event(1, "c1", None, "boss", started(CallRole::Turn, None, None)),
        event(2, "c1", None, "boss", fast_asked("tc0")),
        event(3, "c2", Some("c1"), "fast", started(CallRole::Tool, Some("agent_fast"), Some("quick"))),
        event(4, "c2", Some("c1"), "fast", finished),
        event(5, "c1", None, "boss", fast_asked("tc1")),
        event(6, "c3", Some("c1"), "fast", started(CallRole::Tool, Some("agent_fast"), Some("quick"))),
    ];
    store.append_all("s", &records).unwrap();
    let chats = ChatSessions::open(folder.path()).unwrap();
    let (dispatcher, _, fast, _) = dispatcher();
    dispatcher.runners().insert("boss", Scripted::new(vec![Step::Say("done")]));
    let outcome =
        chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::ApproveAll, on_events(|_| {})).await;
    assert_eq!(outcome.unwrap().status, CallStatus::Ok);
    assert_eq!(fast.requests.lock().unwrap().len(), 1, "the last step's call runs: it is not the first one's answer");
}

/// A last step whose calls had all answered leaves nothing to hand back: the
/// primary has those answers in its messages, and a call it makes next, asked the
/// same thing, runs.
#[tokio::test]
async fn after_a_step_that_had_all_its_answers_a_call_asked_the_same_runs() {
    let folder = tempfile::tempdir().unwrap();
    let store = SessionStore::open(folder.path()).unwrap();
    store.create("s", "Asked again", 1).unwrap();
    let records = vec![
        interrupted_message("check, then check again"),
        event(1, "c1", None, "boss", started(CallRole::Turn, None, None)),
        event(2, "c1", None, "boss", fast_asked("tc0")),
        event(3, "c2", Some("c1"), "fast", started(CallRole::Tool, Some("agent_fast"), Some("quick"))),
        event(4, "c2", Some("c1"), "fast", finished_ok("the first answer", Some("the first answer, fenced"))),
    ];
    store.append_all("s", &records).unwrap();
    let chats = ChatSessions::open(folder.path()).unwrap();
    let (dispatcher, _, fast, _) = dispatcher();
    let boss = Scripted::new(vec![Step::Call(vec![call("agent_fast", "quick")]), Step::Say("done")]);
    dispatcher.runners().insert("boss", boss.clone());
    let outcome =
        chats.resume_turn(&dispatcher, ("s", "t1", "t2"), ApprovalPolicy::ApproveAll, on_events(|_| {})).await;
    assert_eq!(outcome.unwrap().status, CallStatus::Ok);
    let first = format!("{:?}", boss.requests.lock().unwrap()[0].messages);
    assert!(first.contains("the first answer, fenced"), "the step's answer is in its messages: {first}");
    assert_eq!(fast.requests.lock().unwrap().len(), 1, "the next step's call runs: the old answer is not handed back");
}

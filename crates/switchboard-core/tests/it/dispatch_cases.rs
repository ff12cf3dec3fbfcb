//! The dispatcher in process: the demo turn end to end, determinism, parallel calls
//! with a failure, ordering, usage roll-up, what a child is sent, limits, cycle
//! guard, escalation, cancellation and eviction.

use std::sync::Arc;
use std::time::Duration;

use expect_test::expect;
use serde_json::json;
use switchboard_core::contract::Message;
use switchboard_core::{
    CallErrorKind, CallEvent, CallStatus, Config, Dispatcher, EventKind, TurnControl, TurnRequest, Usage,
};

use crate::support::{
    agent, assert_stream_invariants, call, config, entry, exact, render_tree, run, Recorder, Scripted, Step,
};

fn demo_config() -> Config {
    let mut config = Config::demo_default();
    for agent in &mut config.agents {
        agent.delay_ms = Some(0);
    }
    config
}

fn finished_of<'a>(events: &'a [CallEvent], call_id: &str) -> &'a EventKind {
    &events
        .iter()
        .rev()
        .find(|event| event.call_id == call_id && matches!(event.kind, EventKind::CallFinished { .. }))
        .expect("call finished")
        .kind
}

fn total_of(kind: &EventKind) -> Usage {
    match kind {
        EventKind::CallFinished { usage_total, .. } => usage_total.expect("usage total"),
        _ => unreachable!(),
    }
}

fn own_of(kind: &EventKind) -> Usage {
    match kind {
        EventKind::CallFinished { usage, .. } => usage.expect("usage"),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn the_demo_turn_shows_a_nested_call_and_is_deterministic() {
    let (outcome, events) = run(
        &exact(Dispatcher::new(demo_config())),
        None,
        "What makes agent-as-tool calls useful?",
        TurnControl::approving_all(),
    )
    .await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_eq!(outcome.answered_by, "assistant");
    assert!(outcome.text.contains("researcher") && outcome.text.contains("summariser"), "{}", outcome.text);
    assert_stream_invariants(&events);
    expect![[r#"
        assistant [turn] ok: I asked 2 agents for help. Here is what came back:  **researcher**  Fi
          researcher [tool via agent_researcher] ok: Findings on "Find the key facts about: What makes agent-as-tool calls 
            ? approval: approve_once by policy
          summariser [tool via agent_summariser] ok: Summary: Summarise in one line: What makes agent-as-tool calls useful?
            ? approval: approve_once by policy
    "#]].assert_eq(&render_tree(&events));
    let children: Vec<&CallEvent> =
        events.iter().filter(|event| event.depth == 1 && matches!(event.kind, EventKind::CallStarted { .. })).collect();
    assert_eq!(children.iter().map(|event| event.agent.as_str()).collect::<Vec<_>>(), vec!["researcher", "summariser"]);
    for child in &children {
        match &child.kind {
            EventKind::CallStarted { tools, tool_name, input, .. } => {
                assert!(tools.is_empty(), "depth 1 is the default limit: a child is offered no agent tools");
                assert_eq!(tool_name.as_deref(), Some(format!("agent_{}", child.agent).as_str()));
                assert!(input.as_ref().unwrap()["request"].as_str().unwrap().contains("agent-as-tool"));
            }
            _ => unreachable!(),
        }
    }
    let deltas = events.iter().filter(|event| matches!(event.kind, EventKind::TextDelta { .. })).count();
    assert!(deltas > 30, "text streams token by token ({deltas} deltas)");
    assert!(events.iter().any(
        |event| matches!(&event.kind, EventKind::ToolProgress { message, .. } if message == "checking the facts")
    ));
    let root_total = total_of(finished_of(&events, "c1"));
    assert!(root_total.total_tokens > own_of(finished_of(&events, "c1")).total_tokens, "children's usage rolls up");

    // Same input, same events.
    let (_, again) = run(
        &exact(Dispatcher::new(demo_config())),
        None,
        "What makes agent-as-tool calls useful?",
        TurnControl::approving_all(),
    )
    .await;
    assert_eq!(events, again);
}

#[tokio::test]
async fn two_calls_at_once_one_failing_come_back_in_order() {
    let config =
        config(vec![agent("primary"), agent("good"), agent("bad")], vec![entry("good", "Good."), entry("bad", "Bad.")]);
    let dispatcher = exact(Dispatcher::new(config));
    let primary = Scripted::new(vec![
        Step::Call(vec![call("agent_bad", "please fail"), call("agent_good", "please succeed")]),
        Step::Say("Combined answer."),
    ]);
    let good = Scripted::new(vec![Step::Slow { deltas: 3, pause: Duration::from_millis(20) }]);
    let bad = Scripted::new(vec![Step::Fail("connection refused")]);
    dispatcher.runners().insert("primary", primary.clone());
    dispatcher.runners().insert("good", good.clone());
    dispatcher.runners().insert("bad", bad.clone());
    let history = vec![Message::user("earlier secret question"), Message::assistant("earlier answer")];
    let recorder = Recorder::default();
    let request = TurnRequest {
        agent: Some("primary".into()),
        history,
        message: "Do both.".into(),
        reuse: vec![],
        continuation: None,
    };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    let events = recorder.take();
    assert_eq!(outcome.status, CallStatus::Ok, "a failing tool-agent does not fail the turn");
    assert_eq!(outcome.text, "Combined answer.");
    assert_stream_invariants(&events);

    // The second model request carries both results, in the order asked for.
    let requests = primary.requests.lock().unwrap();
    let tool_messages: Vec<(String, String)> = requests[1]
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { tool_call_id, content } => Some((tool_call_id.clone(), content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(tool_messages.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), vec!["tc0", "tc1"]);
    let failure: serde_json::Value = {
        let body = tool_messages[0].1.lines().find(|line| line.starts_with('{')).expect("a JSON error body");
        serde_json::from_str(body).unwrap()
    };
    assert_eq!(failure["status"], "error");
    assert_eq!(failure["error"]["kind"], "unreachable");
    assert!(tool_messages[0].1.starts_with("<<<AGENT_RESULT NONCE agent=\"bad\" status=\"error\">>>"));
    assert!(tool_messages[1].1.contains("slow done"));

    // The children saw only their request: no parent history, no system memory.
    for (runner, request) in [(&good, "please succeed"), (&bad, "please fail")] {
        let sent = runner.requests.lock().unwrap();
        assert_eq!(sent[0].messages, vec![Message::user(request)]);
        assert!(sent[0].tools.is_empty());
    }

    // Usage: root total = own (2 steps) + both children (the failed one reported none).
    let root = finished_of(&events, "c1");
    assert_eq!(own_of(root), Usage::new(20, 10));
    assert_eq!(total_of(root), Usage::new(30, 15));
    match finished_of(&events, events.iter().find(|event| event.agent == "bad").unwrap().call_id.as_str()) {
        EventKind::CallFinished { status, error, usage, .. } => {
            assert_eq!(*status, CallStatus::Error);
            assert_eq!(error.as_ref().unwrap().kind, CallErrorKind::Unreachable);
            assert_eq!(*usage, None, "unknown usage is null, not zero");
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn structured_context_reaches_the_child_labelled() {
    let config = config(vec![agent("primary"), agent("helper")], vec![entry("helper", "Helps.")]);
    let dispatcher = exact(Dispatcher::new(config));
    let primary = Scripted::new(vec![
        Step::Call(vec![("agent_helper", json!({ "request": "sum these", "context": { "numbers": [1, 2, 3] } }))]),
        Step::Say("6"),
    ]);
    let helper = Scripted::new(vec![Step::Say("six")]);
    dispatcher.runners().insert("primary", primary);
    dispatcher.runners().insert("helper", helper.clone());
    let (outcome, _) = run(&dispatcher, None, "go", TurnControl::approving_all()).await;
    assert_eq!(outcome.status, CallStatus::Ok);
    let sent = helper.requests.lock().unwrap();
    assert_eq!(sent[0].messages.len(), 2);
    assert!(sent[0].messages[0].text().starts_with("Context from the calling agent \"primary\""));
    assert!(sent[0].messages[0].text().contains("\"numbers\""));
    assert_eq!(sent[0].messages[1], Message::user("sum these"));
}

#[tokio::test]
async fn refusals_become_nodes_with_a_status_and_a_reason() {
    let mut limited = config(vec![agent("primary"), agent("helper"), agent("secret")], vec![entry("helper", "Helps.")]);
    limited.limits.max_calls_per_turn = Some(1);
    let dispatcher = exact(Dispatcher::new(limited));
    let primary = Scripted::new(vec![
        Step::Call(vec![
            call("agent_secret", "not offered"),
            call("agent_helper", "first"),
            call("agent_helper", "over the ceiling"),
            call("agent_primary", "myself"),
            call("rm_rf", "unknown"),
            ("agent_helper", json!("not an object")),
        ]),
        Step::Say("done"),
    ]);
    dispatcher.runners().insert("primary", primary);
    dispatcher.runners().insert("helper", Scripted::new(vec![Step::Say("ok")]));
    let (outcome, events) = run(&dispatcher, None, "go", TurnControl::approving_all()).await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_stream_invariants(&events);
    let statuses: Vec<(String, CallStatus, Option<CallErrorKind>)> = events
        .iter()
        .filter(|event| event.depth == 1)
        .filter_map(|event| match &event.kind {
            EventKind::CallFinished { status, error, .. } => {
                Some((event.agent.clone(), *status, error.as_ref().map(|error| error.kind)))
            }
            _ => None,
        })
        .collect();
    let expected = vec![
        ("secret", CallStatus::Limited, Some(CallErrorKind::NotOffered)),
        ("helper", CallStatus::Ok, None),
        ("helper", CallStatus::Limited, Some(CallErrorKind::MaxCallsPerTurn)),
        ("primary", CallStatus::Limited, Some(CallErrorKind::Cycle)),
        ("rm_rf", CallStatus::Error, Some(CallErrorKind::UnknownTool)),
        ("helper", CallStatus::Error, Some(CallErrorKind::BadArguments)),
    ];
    let expected: Vec<(String, CallStatus, Option<CallErrorKind>)> =
        expected.into_iter().map(|(agent, status, kind)| (agent.to_string(), status, kind)).collect();
    let mut sorted_statuses = statuses.clone();
    let mut sorted_expected = expected.clone();
    sorted_statuses.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    sorted_expected.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(sorted_statuses, sorted_expected);
}

#[tokio::test]
async fn a_cancelled_call_returns_cancelled_and_the_parent_continues() {
    let config = config(vec![agent("primary"), agent("slow")], vec![entry("slow", "Slow.")]);
    let dispatcher = Arc::new(Dispatcher::new(config));
    let primary =
        Scripted::new(vec![Step::Call(vec![call("agent_slow", "take your time")]), Step::Say("went on without it")]);
    dispatcher.runners().insert("primary", primary.clone());
    dispatcher
        .runners()
        .insert("slow", Scripted::new(vec![Step::Slow { deltas: 1000, pause: Duration::from_millis(10) }]));
    let recorder = Recorder::default();
    let control = TurnControl::approving_all();
    let turn = {
        let dispatcher = dispatcher.clone();
        let control = control.clone();
        let sink = recorder.sink();
        tokio::spawn(async move {
            dispatcher.run_turn(TurnRequest { message: "go".into(), ..Default::default() }, sink, control).await
        })
    };
    // Wait until the child streams, then cancel it by id.
    recorder
        .wait_for("the child streams", |events| {
            events.iter().any(|event| event.depth == 1 && matches!(event.kind, EventKind::TextDelta { .. }))
        })
        .await;
    assert!(control.cancel_call("c2"));
    let outcome = tokio::time::timeout(Duration::from_secs(5), turn).await.expect("the turn ends").unwrap();
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_eq!(outcome.text, "went on without it");
    let events = recorder.take();
    assert_stream_invariants(&events);
    assert!(matches!(finished_of(&events, "c2"), EventKind::CallFinished { status: CallStatus::Cancelled, .. }));
    let requests = primary.requests.lock().unwrap();
    assert!(requests[1]
        .messages
        .iter()
        .any(|message| matches!(message, Message::Tool { content, .. } if content.contains("status=\"cancelled\""))));
}

#[tokio::test]
async fn cancelling_the_turn_ends_every_call() {
    let config = config(vec![agent("primary"), agent("slow")], vec![entry("slow", "Slow.")]);
    let dispatcher = Arc::new(Dispatcher::new(config));
    dispatcher
        .runners()
        .insert("primary", Scripted::new(vec![Step::Call(vec![call("agent_slow", "a"), call("agent_slow", "b")])]));
    dispatcher.runners().insert(
        "slow",
        Scripted::new(vec![
            Step::Slow { deltas: 1000, pause: Duration::from_millis(10) },
            Step::Slow { deltas: 1000, pause: Duration::from_millis(10) },
        ]),
    );
    let recorder = Recorder::default();
    let control = TurnControl::approving_all();
    let turn = {
        let (dispatcher, control, sink) = (dispatcher.clone(), control.clone(), recorder.sink());
        tokio::spawn(async move {
            dispatcher.run_turn(TurnRequest { message: "go".into(), ..Default::default() }, sink, control).await
        })
    };
    // Both children stream before the turn is cancelled.
    recorder
        .wait_for("both children stream", |events| {
            let streaming: std::collections::HashSet<&str> = events
                .iter()
                .filter(|event| event.depth == 1 && matches!(event.kind, EventKind::TextDelta { .. }))
                .map(|event| event.call_id.as_str())
                .collect();
            streaming.len() == 2
        })
        .await;
    control.cancel_turn();
    let outcome = tokio::time::timeout(Duration::from_secs(5), turn).await.expect("the turn ends").unwrap();
    assert_eq!(outcome.status, CallStatus::Cancelled);
    let events = recorder.take();
    assert_stream_invariants(&events);
    let cancelled = events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::CallFinished { status: CallStatus::Cancelled, .. }))
        .count();
    assert_eq!(cancelled, 3, "root and both children end cancelled");
}

#[tokio::test]
async fn escalate_hands_the_turn_to_the_escalation_agent() {
    let (outcome, events) = run(
        &exact(Dispatcher::new(demo_config())),
        None,
        "escalate: this needs an expert",
        TurnControl::approving_all(),
    )
    .await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_eq!(outcome.answered_by, "expert");
    assert!(outcome.text.starts_with("As the escalation expert"), "{}", outcome.text);
    assert_stream_invariants(&events);
    assert!(events.iter().any(
        |event| matches!(&event.kind, EventKind::Escalated { from, to, .. } if from == "assistant" && to == "expert")
    ));
    let expert_start = events.iter().find(|event| event.agent == "expert").unwrap();
    match &expert_start.kind {
        EventKind::CallStarted { tools, role, .. } => {
            assert!(tools.is_empty(), "the escalation target is offered no tool-agents");
            assert_eq!(*role, switchboard_core::CallRole::Escalation);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_unknown_root_agent_is_a_clear_error() {
    let dispatcher = Dispatcher::new(demo_config());
    let recorder = Recorder::default();
    let request = TurnRequest { agent: Some("nobody".into()), message: "hi".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    assert_eq!(outcome.status, CallStatus::Error);
    assert_eq!(outcome.error.unwrap().kind, CallErrorKind::UnknownAgent);
    assert_stream_invariants(&recorder.take());
}

#[tokio::test]
async fn eviction_rebuilds_runners_but_running_calls_keep_theirs() {
    let dispatcher = Arc::new(Dispatcher::new(demo_config()));
    let (_, _) = run(&dispatcher, None, "hello there, colleagues", TurnControl::approving_all()).await;
    assert_eq!(dispatcher.runners().cached_agents(), vec!["assistant", "researcher", "summariser"]);
    let mut changed = demo_config();
    changed.agent_mut("researcher").unwrap().model = Some("demo-summariser".into());
    dispatcher.replace_config(changed, &["researcher".to_string()]);
    assert_eq!(dispatcher.runners().cached_agents(), vec!["assistant", "summariser"]);
    let (outcome, _) = run(&dispatcher, None, "hello there, colleagues", TurnControl::approving_all()).await;
    assert!(
        outcome.text.contains("**researcher**\n\nSummary:"),
        "the rebuilt runner uses the new config: {}",
        outcome.text
    );
}

/// Runs `message` on a config whose entries ask for approval, answering each
/// request with the next of `answers` from inside the event sink, as the app's
/// channel handler does from the UI.
async fn run_answering(
    config: Config,
    message: &str,
    answers: Vec<switchboard_core::ApprovalDecision>,
    approved: switchboard_core::Session,
) -> (switchboard_core::TurnOutcome, Vec<CallEvent>) {
    let dispatcher = Dispatcher::new(config);
    let control = TurnControl::new(switchboard_core::ApprovalPolicy::Ask, approved);
    let answers = std::sync::Mutex::new(answers.into_iter());
    let recorder = Recorder::default();
    let record = recorder.sink();
    let answering = control.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event: CallEvent| {
        if matches!(event.kind, EventKind::ApprovalRequested { .. }) {
            let decision = answers.lock().unwrap().next().expect("an answer for every request");
            assert!(answering.resolve_approval(&event.call_id, decision));
        }
        record(event);
    });
    let outcome =
        dispatcher.run_turn(TurnRequest { message: message.into(), ..Default::default() }, sink, control).await;
    let events = recorder.take();
    assert_stream_invariants(&events);
    (outcome, events)
}

fn statuses_by_agent(events: &[CallEvent]) -> Vec<(String, CallStatus)> {
    events
        .iter()
        .filter(|event| event.depth > 0)
        .filter_map(|event| match &event.kind {
            EventKind::CallFinished { status, .. } => Some((event.agent.clone(), *status)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn approval_once_always_and_deny_from_the_user() {
    use switchboard_core::ApprovalDecision::{ApproveAlways, ApproveOnce, Deny};
    let approved = switchboard_core::Session::default();
    let (outcome, events) =
        run_answering(demo_config(), "Tell me about approvals please", vec![ApproveAlways, Deny], approved.clone())
            .await;
    assert_eq!(outcome.status, CallStatus::Ok, "a denial does not end the turn");
    assert_stream_invariants(&events);
    let mut statuses = statuses_by_agent(&events);
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(statuses, vec![("researcher".into(), CallStatus::Ok), ("summariser".into(), CallStatus::Denied)]);
    let requested: Vec<&CallEvent> =
        events.iter().filter(|event| matches!(event.kind, EventKind::ApprovalRequested { .. })).collect();
    assert_eq!(requested.len(), 2);
    match &requested[0].kind {
        EventKind::ApprovalRequested { tool_name, input, limits } => {
            assert_eq!(tool_name, "agent_researcher");
            assert!(input.as_ref().unwrap()["request"].as_str().unwrap().contains("approvals"));
            assert_eq!((limits.depth, limits.max_depth, limits.may_delegate), (1, 1, false));
        }
        _ => unreachable!(),
    }
    // Nothing of a call runs before its approval: no delta precedes the resolution.
    let resolved_at = events
        .iter()
        .position(|event| event.agent == "researcher" && matches!(event.kind, EventKind::ApprovalResolved { .. }))
        .unwrap();
    assert!(events[..resolved_at].iter().all(|event| !(event.agent == "researcher"
        && matches!(event.kind, EventKind::TextDelta { .. } | EventKind::ToolProgress { .. }))));
    assert!(outcome.text.contains("denied"), "the parent read the denial: {}", outcome.text);

    // "Always" holds for the rest of the session: the next turn asks only for the summariser.
    let (_, events) = run_answering(demo_config(), "And again please", vec![ApproveOnce], approved).await;
    let asked: Vec<&str> = events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::ApprovalRequested { .. }))
        .map(|event| event.agent.as_str())
        .collect();
    assert_eq!(asked, vec!["summariser"]);
}

#[tokio::test]
async fn config_approval_deny_and_auto_need_no_answer() {
    let mut config = demo_config();
    config.agent_tools[0].approval = Some(switchboard_core::Approval::Deny);
    config.agent_tools[1].approval = Some(switchboard_core::Approval::Auto);
    let (outcome, events) = run_answering(config, "Policies in the config", vec![], Default::default()).await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert!(events.iter().all(|event| !matches!(event.kind, EventKind::ApprovalRequested { .. })));
    let mut statuses = statuses_by_agent(&events);
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(statuses, vec![("researcher".into(), CallStatus::Denied), ("summariser".into(), CallStatus::Ok)]);
}

#[tokio::test]
async fn an_agents_own_approval_holds_where_its_entry_says_nothing() {
    use switchboard_core::Approval::{Ask, Auto, Deny};
    let mut config = demo_config();
    assert_eq!((config.agent_tools[0].agent.as_str(), config.agent_tools[0].approval), ("researcher", None));
    for agent in config.agents.iter_mut() {
        match agent.name.as_str() {
            "researcher" => agent.approval = Some(Auto),
            "summariser" => agent.approval = Some(Auto),
            _ => {}
        }
    }
    config.agent_tools[1].approval = Some(Deny); // the entry's word over the agent's
    let shown: Vec<_> = switchboard_core::config::merged_tools(&config, "assistant")
        .into_iter()
        .map(|tool| (tool.agent, tool.approval))
        .collect();
    assert_eq!(shown, vec![("researcher".to_string(), Auto), ("summariser".to_string(), Deny)]);
    let (outcome, events) = run_answering(config.clone(), "Policies in the config", vec![], Default::default()).await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert!(events.iter().all(|event| !matches!(event.kind, EventKind::ApprovalRequested { .. })));
    let mut statuses = statuses_by_agent(&events);
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(statuses, vec![("researcher".into(), CallStatus::Ok), ("summariser".into(), CallStatus::Denied)]);
    // Neither saying anything: ask.
    config.agents.iter_mut().for_each(|agent| agent.approval = None);
    config.agent_tools[1].approval = None;
    assert!(switchboard_core::config::merged_tools(&config, "assistant").iter().all(|tool| tool.approval == Ask));
}

#[tokio::test]
async fn approval_works_at_depth_two() {
    let mut config = config(vec![agent("a"), agent("b"), agent("c")], vec![]);
    config.limits.max_depth = Some(2);
    config.agents[0].tools = vec![entry("b", "B.")];
    config.agents[1].tools = vec![entry("c", "C.")];
    let dispatcher_config = config.clone();
    let dispatcher = Dispatcher::new(dispatcher_config);
    dispatcher
        .runners()
        .insert("a", Scripted::new(vec![Step::Call(vec![call("agent_b", "ask c")]), Step::Say("a done")]));
    dispatcher
        .runners()
        .insert("b", Scripted::new(vec![Step::Call(vec![call("agent_c", "deep")]), Step::Say("b done")]));
    dispatcher.runners().insert("c", Scripted::new(vec![Step::Say("c done")]));
    let control = TurnControl::default();
    let recorder = Recorder::default();
    let record = recorder.sink();
    let answering = control.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event: CallEvent| {
        if let EventKind::ApprovalRequested { limits, .. } = &event.kind {
            assert_eq!(limits.may_delegate, event.depth < 2);
            answering.resolve_approval(&event.call_id, switchboard_core::ApprovalDecision::ApproveOnce);
        }
        record(event);
    });
    let outcome = dispatcher
        .run_turn(TurnRequest { agent: Some("a".into()), message: "go".into(), ..Default::default() }, sink, control)
        .await;
    assert_eq!(outcome.text, "a done");
    let events = recorder.take();
    assert_stream_invariants(&events);
    let asked: Vec<(String, u32)> = events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::ApprovalRequested { .. }))
        .map(|event| (event.agent.clone(), event.depth))
        .collect();
    assert_eq!(asked, vec![("b".to_string(), 1), ("c".to_string(), 2)]);
}

#[tokio::test]
async fn cancelling_a_waiting_call_ends_it_cancelled() {
    let dispatcher = Arc::new(Dispatcher::new(demo_config()));
    let control = TurnControl::default();
    let recorder = Recorder::default();
    let turn = {
        let (dispatcher, control, sink) = (dispatcher.clone(), control.clone(), recorder.sink());
        tokio::spawn(async move {
            dispatcher
                .run_turn(TurnRequest { message: "wait for me please".into(), ..Default::default() }, sink, control)
                .await
        })
    };
    recorder
        .wait_for("c3 waits for approval", |events| {
            events
                .iter()
                .any(|event| matches!(event.kind, EventKind::ApprovalRequested { .. }) && event.call_id == "c3")
        })
        .await;
    assert!(control.cancel_call("c2"));
    assert!(control.cancel_call("c3"));
    let outcome = tokio::time::timeout(Duration::from_secs(5), turn).await.expect("the turn ends").unwrap();
    assert_eq!(outcome.status, CallStatus::Ok);
    let events = recorder.take();
    assert_stream_invariants(&events);
    assert_eq!(
        statuses_by_agent(&events),
        vec![("researcher".into(), CallStatus::Cancelled), ("summariser".into(), CallStatus::Cancelled)]
    );
    assert!(
        !control.resolve_approval("c2", switchboard_core::ApprovalDecision::ApproveOnce),
        "no request is left waiting"
    );
}

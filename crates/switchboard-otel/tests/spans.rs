//! A nested demo turn (two delegates, one denied by the config) exported through
//! the SDK's in-memory exporter: the span tree mirrors the call tree, and every
//! attribute, event and status the conventions and the backends rely on is there.

use std::sync::Arc;

use opentelemetry::trace::{SpanId, Status};
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SpanData};
use switchboard_core::config::{Approval, Config, Provider, RequestVia};
use switchboard_core::{Dispatcher, TurnControl, TurnRequest};
use switchboard_otel::{ExportSettings, Telemetry};

fn settings(include_content: bool) -> ExportSettings {
    ExportSettings {
        endpoint: "memory".into(),
        headers: Default::default(),
        service_name: "switchboard-test".into(),
        include_content,
    }
}

async fn exported_turn(include_content: bool) -> Vec<SpanData> {
    let mut config = Config::demo_default();
    config.agent_tools[1].approval = Some(Approval::Deny); // the summariser
    exported(config, include_content).await
}

async fn exported(mut config: Config, include_content: bool) -> Vec<SpanData> {
    for agent in &mut config.agents {
        agent.delay_ms = Some(0);
    }
    let exporter = InMemorySpanExporter::default();
    let telemetry = Telemetry::with_exporter(exporter.clone(), settings(include_content));
    let recorder = Arc::new(telemetry.turn(&config, Some("session-7".into())));
    let dispatcher = Dispatcher::new(config);
    let sink_recorder = recorder.clone();
    let request = TurnRequest { message: "Explain agent delegation in two paragraphs".into(), ..Default::default() };
    let outcome = dispatcher
        .run_turn(request, Arc::new(move |event| sink_recorder.record(&event)), TurnControl::approving_all())
        .await;
    assert_eq!(outcome.status, switchboard_core::CallStatus::Ok);
    telemetry.flush().unwrap();
    assert_eq!(telemetry.health().last_error, None);
    assert!(telemetry.health().spans_sent >= 7, "{:?}", telemetry.health());
    exporter.get_finished_spans().unwrap()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans.iter().find(|span| span.name == name).unwrap_or_else(|| {
        panic!("no span {name:?} in {:?}", spans.iter().map(|span| span.name.to_string()).collect::<Vec<_>>())
    })
}

fn attribute(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes.iter().find(|pair| pair.key.as_str() == key).map(|pair| pair.value.clone())
}

fn text(span: &SpanData, key: &str) -> String {
    attribute(span, key).map(|value| value.to_string()).unwrap_or_else(|| panic!("{} has no {key}", span.name))
}

fn tokens(span: &SpanData, key: &str) -> i64 {
    match attribute(span, key) {
        Some(Value::I64(count)) => count,
        other => panic!("{}: {key} is {other:?}", span.name),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_span_tree_mirrors_the_call_tree_with_usage_cost_and_refusals() {
    let spans = exported_turn(false).await;
    let root = named(&spans, "invoke_agent assistant");
    let tool = named(&spans, "execute_tool agent_researcher");
    let researcher = named(&spans, "invoke_agent researcher");
    let researcher_chat = named(&spans, "chat demo-researcher");
    let denied_tool = named(&spans, "execute_tool agent_summariser");
    let summariser = named(&spans, "invoke_agent summariser");

    // One trace; parents as the call tree (the agent-as-a-tool shape).
    assert_eq!(root.parent_span_id, SpanId::INVALID);
    assert!(spans.iter().all(|span| span.span_context.trace_id() == root.span_context.trace_id()));
    assert_eq!(tool.parent_span_id, root.span_context.span_id());
    assert_eq!(researcher.parent_span_id, tool.span_context.span_id());
    assert_eq!(researcher_chat.parent_span_id, researcher.span_context.span_id());
    assert_eq!(summariser.parent_span_id, denied_tool.span_context.span_id());

    // The conventions' attributes.
    assert_eq!(text(root, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(root, "gen_ai.agent.name"), "assistant");
    assert_eq!(text(root, "gen_ai.conversation.id"), "session-7");
    assert_eq!(text(root, "gen_ai.provider.name"), "switchboard.demo");
    assert_eq!(text(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(tool, "gen_ai.tool.name"), "agent_researcher");
    assert_eq!(text(tool, "gen_ai.tool.type"), "function");
    assert_eq!(text(researcher, "gen_ai.agent.id"), text(tool, "gen_ai.tool.call.id"));
    assert_eq!(text(researcher_chat, "gen_ai.operation.name"), "chat");
    assert_eq!(text(researcher_chat, "gen_ai.request.model"), "demo-researcher");
    assert!(tokens(researcher_chat, "gen_ai.usage.input_tokens") > 0);
    assert!(tokens(researcher_chat, "gen_ai.usage.output_tokens") > 0);
    assert_eq!(tokens(researcher, "gen_ai.usage.output_tokens"), tokens(researcher_chat, "gen_ai.usage.output_tokens"));
    assert!(matches!(attribute(researcher, "switchboard.cost_usd"), Some(Value::F64(cost)) if cost > 0.0));
    assert!(tokens(root, "switchboard.usage.subtree_total_tokens") > tokens(researcher, "gen_ai.usage.input_tokens"));
    assert_eq!(researcher.status, Status::Ok);
    let approvals: Vec<&str> = researcher.events.events.iter().map(|event| event.name.as_ref()).collect();
    assert_eq!(approvals, vec!["switchboard.approval.requested", "switchboard.approval.resolved"]);

    // The denied call is visible: status, error type, the refusal as an event, no model span.
    assert!(matches!(&summariser.status, Status::Error { description } if description.starts_with("denied")));
    assert_eq!(text(summariser, "error.type"), "denied");
    assert_eq!(text(denied_tool, "error.type"), "denied");
    let refused = summariser.events.events.iter().find(|event| event.name == "switchboard.refused").unwrap();
    assert!(refused.attributes.iter().any(|pair| pair.key.as_str() == "kind" && pair.value.as_str() == "denied"));
    assert!(!spans.iter().any(|span| span.name == "chat demo-summariser"));

    // Times come from the events: children inside their parents.
    assert!(tool.start_time >= root.start_time && tool.end_time <= root.end_time);
    assert!(researcher.start_time >= tool.start_time && researcher.end_time <= tool.end_time);
    // Content is opt-in.
    assert!(spans.iter().all(|span| attribute(span, "gen_ai.input.messages").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_goes_on_the_spans_only_when_asked() {
    let spans = exported_turn(true).await;
    let researcher = named(&spans, "invoke_agent researcher");
    let input: serde_json::Value = serde_json::from_str(&text(researcher, "gen_ai.input.messages")).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert!(input[0]["parts"][0]["content"].as_str().unwrap().contains("Explain agent delegation"));
    let output: serde_json::Value = serde_json::from_str(&text(researcher, "gen_ai.output.messages")).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    let tool = named(&spans, "execute_tool agent_researcher");
    assert!(text(tool, "gen_ai.tool.call.result").contains("AGENT_RESULT"), "the fenced result, as the parent got it");
}

/// An agent's error text is content: with content off, a failed call's status
/// and events say only how it ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_calls_own_words_stay_off_the_spans_unless_content_is_on() {
    let failing = || {
        let mut config = Config::demo_default();
        let summariser = config.agents.iter_mut().find(|agent| agent.name == "summariser").unwrap();
        summariser.provider = Provider::Subprocess;
        summariser.command = Some("sh".into());
        summariser.args = vec!["-c".into(), "echo 'remote words xyzzy' >&2; exit 3".into()];
        summariser.request_via = Some(RequestVia::Stdin);
        config
    };
    for include_content in [false, true] {
        let spans = exported(failing(), include_content).await;
        let summariser = named(&spans, "invoke_agent summariser");
        let Status::Error { description } = &summariser.status else { panic!("{:?}", summariser.status) };
        assert!(description.starts_with("error"), "{description}");
        let everything = format!("{:?}", spans);
        assert_eq!(
            everything.contains("remote words xyzzy"),
            include_content,
            "content {include_content}: {description}"
        );
    }
}

#[test]
fn a_dead_endpoint_is_health_not_a_failure() {
    let telemetry = Telemetry::start(ExportSettings {
        endpoint: "http://127.0.0.1:9/v1/traces".into(),
        headers: Default::default(),
        service_name: "switchboard-test".into(),
        include_content: false,
    })
    .unwrap();
    let config = Config::demo_default();
    let events = vec![];
    assert_eq!(telemetry.export_events(&config, None, &events), 0);
    let recorder = telemetry.turn(&config, None);
    let started = switchboard_core::CallEvent {
        seq: 1,
        ts_ms: 1_000,
        call_id: "c1".into(),
        parent_id: None,
        agent: "assistant".into(),
        depth: 0,
        kind: switchboard_core::EventKind::CallStarted {
            role: switchboard_core::event::CallRole::Turn,
            tool_name: None,
            input: None,
            tools: vec![],
            model: None,
            steering: Default::default(),
        },
    };
    let mut finished = started.clone();
    finished.seq = 2;
    finished.kind = switchboard_core::EventKind::CallFinished {
        status: switchboard_core::CallStatus::Ok,
        result: None,
        usage: None,
        usage_total: None,
        cost: None,
        cost_total: None,
        steps: 0,
        error: None,
        delivered: None,
    };
    recorder.record(&started);
    recorder.record(&finished);
    assert!(telemetry.flush().is_err(), "nothing listens on port 9");
    let health = telemetry.health();
    assert_eq!(health.batches_sent, 0);
    assert!(health.last_error.is_some(), "{health:?}");
}

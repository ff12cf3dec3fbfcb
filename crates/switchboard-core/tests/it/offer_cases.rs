//! Who is offered which built-in tool, each rule tried from the side that must be
//! refused (cases cargo-mutants found untested): `escalate` only to the primary
//! answering the user, and only towards another configured agent; `ask_agent` only
//! when there is someone to ask; `ask_model` only when the advisor is enabled,
//! configured, not the caller and not on the call path; the delegation guidance
//! only for a caller that can delegate; an outside call's context reaching the
//! delegate; and a claude-cli agent, which calls but is never called: not offered
//! even with an entry naming it, and refused when a model or a client invents the call.

use std::sync::Arc;

use switchboard_core::config::DelegationTool;
use switchboard_core::contract::{Message, ModelRequest};
use switchboard_core::tools::{offered_tools, Standing, ASK_AGENT, ASK_MODEL, ESCALATE};
use switchboard_core::{
    AgentConfig, AgentToolEntry, CallErrorKind, CallStatus, Config, Dispatcher, Provider, ToolCallRequest, TurnControl,
};

use crate::support::{agent, call, config, entry, Scripted, Step};

fn names(config: &Config, caller: &str, standing: Standing, path: &[&str]) -> Vec<String> {
    let path: Vec<String> = path.iter().map(|name| name.to_string()).collect();
    offered_tools(config, caller, standing, &path, 3, None).into_iter().map(|tool| tool.name).collect()
}

#[test]
fn escalate_is_offered_to_the_primary_answering_the_user_only() {
    let mut config = config(vec![agent("lead"), agent("other"), agent("expert")], vec![]);
    config.primary = Some("lead".into());
    config.escalation = Some("expert".into());
    assert_eq!(names(&config, "lead", Standing::Root, &[]), [ESCALATE]);
    assert!(names(&config, "other", Standing::Root, &[]).is_empty(), "a handoff's agent is not the primary");
    assert!(names(&config, "lead", Standing::Tool { depth: 1 }, &[]).is_empty(), "nor is the primary called as a tool");
    config.escalation = Some("lead".into());
    assert!(names(&config, "lead", Standing::Root, &[]).is_empty(), "no escalation to itself");
    config.escalation = Some("nobody".into());
    assert!(names(&config, "lead", Standing::Root, &[]).is_empty(), "no escalation to an agent that is not configured");
}

#[test]
fn ask_agent_is_offered_only_when_there_is_someone_to_ask() {
    let mut config = config(vec![agent("lead"), agent("helper")], vec![]);
    config.delegation_tool = Some(DelegationTool::AskAgent);
    assert!(names(&config, "lead", Standing::Root, &[]).is_empty());
    config.agent_tools = vec![entry("helper", "Helps.")];
    assert_eq!(names(&config, "lead", Standing::Root, &[]), [ASK_AGENT]);
}

#[test]
fn ask_model_is_offered_only_when_the_advisor_can_be_asked() {
    let base = {
        let mut config = config(vec![agent("lead"), agent("sage")], vec![]);
        config.advisor = Some(AgentToolEntry::new("sage", "Knows things."));
        config
    };
    let offered = |config: &Config, caller: &str, path: &[&str]| names(config, caller, Standing::Root, path);
    let definitions = offered_tools(&base, "lead", Standing::Root, &[], 3, None);
    assert_eq!(definitions.iter().map(|tool| tool.name.as_str()).collect::<Vec<_>>(), [ASK_MODEL]);
    let definition = &definitions[0].definition;
    assert_eq!(definition["function"]["name"], ASK_MODEL);
    assert!(definition["function"]["description"].as_str().unwrap().contains("sage"));
    assert_eq!(definition["function"]["parameters"]["type"], "object");

    let mut disabled = base.clone();
    disabled.advisor.as_mut().unwrap().enabled = Some(false);
    assert!(offered(&disabled, "lead", &[]).is_empty(), "a disabled advisor");
    assert!(offered(&base, "sage", &[]).is_empty(), "the advisor asking itself");
    let mut unknown = base.clone();
    unknown.advisor = Some(AgentToolEntry::new("ghost", "Gone."));
    assert!(offered(&unknown, "lead", &[]).is_empty(), "an advisor that is not configured");
    assert!(offered(&base, "lead", &["sage"]).is_empty(), "an advisor already on the call path");
}

/// What the primary `lead` is sent first in a turn where it answers at once.
async fn first_request_of_lead(config: Config) -> ModelRequest {
    let dispatcher = Dispatcher::new(config);
    let lead = Scripted::new(vec![Step::Say("alone")]);
    dispatcher.runners().insert("lead", lead.clone());
    let sink: switchboard_core::EventSink = Arc::new(|_| {});
    let request = switchboard_core::TurnRequest { message: "hi".into(), ..Default::default() };
    dispatcher.run_turn(request, sink, TurnControl::approving_all()).await;
    let sent = lead.requests.lock().unwrap()[0].clone();
    sent
}

#[tokio::test]
async fn guidance_goes_to_a_caller_that_can_delegate_not_to_one_that_can_only_escalate() {
    let mut config = config(vec![agent("lead"), agent("expert")], vec![]);
    config.primary = Some("lead".into());
    config.escalation = Some("expert".into());
    let sent = first_request_of_lead(config).await;
    assert_eq!(sent.tools.len(), 1, "escalate is offered");
    let system = sent
        .messages
        .iter()
        .any(|message| matches!(message, Message::System { content } if content.contains("delegat")));
    assert!(!system, "escalate alone is no delegation: no guidance");

    // The control: with a tool-agent to call, the same caller gets the guidance.
    let mut delegating = crate::support::config(vec![agent("lead"), agent("expert")], vec![entry("expert", "Knows.")]);
    delegating.primary = Some("lead".into());
    let sent = first_request_of_lead(delegating).await;
    let system = sent
        .messages
        .iter()
        .any(|message| matches!(message, Message::System { content } if content.contains("delegat")));
    assert!(system, "a caller with a tool-agent gets the guidance");
}

#[tokio::test]
async fn an_outside_calls_context_reaches_the_delegate() {
    let dispatcher = Dispatcher::new(config(vec![agent("helper")], vec![entry("helper", "Helps.")]));
    let helper = Scripted::new(vec![Step::Say("done")]);
    dispatcher.runners().insert("helper", helper.clone());
    let sink: switchboard_core::EventSink = Arc::new(|_| {});
    let request = ToolCallRequest {
        agent: "helper".into(),
        request: "use the data".into(),
        context: Some(serde_json::json!({ "river": "Rhine" })),
        ..Default::default()
    };
    dispatcher.run_tool_call(request, sink, TurnControl::approving_all()).await;
    let sent = format!("{:?}", helper.requests.lock().unwrap()[0].messages);
    assert!(sent.contains("Rhine"), "the context is passed to the agent: {sent}");
}

/// A claude-cli agent calls tool-agents but is never one: an entry naming it offers
/// nothing, a model that invents `agent_claude` is refused as not offered, and so
/// is a client's call from outside; its runner is never asked.
#[tokio::test]
async fn a_claude_cli_agent_is_never_offered_nor_called_even_when_the_call_is_invented() {
    let config = config(
        vec![agent("lead"), AgentConfig::new("claude", Provider::ClaudeCli), agent("helper")],
        vec![entry("claude", "Claude Code."), entry("helper", "Helps.")],
    );
    assert_eq!(names(&config, "lead", Standing::Root, &[]), ["agent_helper"]);
    let dispatcher = Dispatcher::new(config);
    let lead = Scripted::new(vec![Step::Call(vec![call("agent_claude", "write code")]), Step::Say("without claude")]);
    let claude = Scripted::new(vec![Step::Say("claude ran")]);
    dispatcher.runners().insert("lead", lead.clone());
    dispatcher.runners().insert("claude", claude.clone());
    let recorder = crate::support::Recorder::default();
    let request =
        switchboard_core::TurnRequest { agent: Some("lead".into()), message: "hi".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, recorder.sink(), TurnControl::approving_all()).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (CallStatus::Ok, "without claude"));
    let refused = recorder.take().into_iter().any(|event| {
        event.agent == "claude"
            && matches!(&event.kind, switchboard_core::EventKind::CallFinished { error: Some(error), .. }
                if error.kind == CallErrorKind::NotOffered)
    });
    assert!(refused, "the invented call is a refused node");

    let outside = ToolCallRequest { agent: "claude".into(), request: "write code".into(), ..Default::default() };
    let sink: switchboard_core::EventSink = Arc::new(|_| {});
    let outcome = dispatcher.run_tool_call(outside, sink, TurnControl::approving_all()).await;
    assert_eq!(outcome.error.map(|error| error.kind), Some(CallErrorKind::NotOffered));
    assert!(claude.requests.lock().unwrap().is_empty(), "the claude-cli agent was never asked");
}

//! Admitting a delegation: a model's tool call (or a call from outside the tree) is
//! read into a `Delegation`, then `admit` decides, in a fixed order, whether it may
//! run: the cycle guard, the call's own arguments, the target's existence, the
//! turn's ceiling and budget, and the entry's approval policy. The answer is typed:
//! an `Admitted` call with its limits, or the refusal as a `CallError`. A new refusal
//! reason is a `CallErrorKind` variant and a check here.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{merge_entries, AgentToolEntry};
use crate::config::{tool_name, AgentConfig, AgentNames, Approval, Config, Limits, Provider, SessionMode};
use crate::contract::{Message, ToolCall};
use crate::event::{ApprovalLimits, CallError, CallErrorKind, CallRole};
use crate::tools::{tool_agents_for, OfferedTool, ToolKind, ASK_AGENT, ASK_MODEL, ESCALATE};

use super::turn::Turn;

/// Who makes a delegation: a call of the tree, or (for `run_tool_call`) someone
/// outside it, standing where a root call would.
pub(super) struct Caller<'a> {
    /// The calling call; `None` when the delegation is the root of its tree.
    pub call_id: Option<&'a str>,
    /// The calling agent, whose tool entries apply; `None`: the global entries.
    pub agent: Option<&'a str>,
    pub depth: u32,
    /// The agents on the path from the root, the caller included.
    pub path: &'a [String],
    pub cancel: &'a CancellationToken,
    /// The caller's messages so far (what `share_context` draws from).
    pub messages: &'a [Message],
    /// The limits the caller runs under (a narrowed delegate gets none larger).
    pub limits: &'a Limits,
    /// The tool-agents the caller was offered here (a narrowed delegate's reach).
    pub could_call: &'a [String],
    /// The caller's own reach when it is narrowed itself.
    pub reach: Option<&'a [String]>,
    /// When the caller is narrowed: the strictest approval under which the callers
    /// above it could call each agent in its reach (`deny` and `ask` carry down).
    pub floor: Option<&'a BTreeMap<String, Approval>>,
}

/// A delegation as asked for, before it is admitted.
pub(super) struct Delegation {
    /// The tool the caller called (`agent_x`, `ask_agent`, `ask_model`).
    pub tool_name: String,
    /// The arguments as given, for the node of a refused call.
    pub arguments: Option<Value>,
    /// The agent the call goes to (the best guess when the call cannot be read).
    pub target: String,
    /// What the delegate is asked, or why the call cannot be read.
    pub request: Result<DelegationRequest, CallError>,
}

/// What a readable delegation asks of its target.
pub(super) struct DelegationRequest {
    pub role: CallRole,
    pub request: String,
    pub context: Option<Value>,
    /// A model among the target's `allowed_models` (`ask_agent`).
    pub model: Option<String>,
}

/// A delegation that may run, with what it runs under.
pub(super) struct Admitted {
    pub target: AgentConfig,
    pub limits: Limits,
    /// Set when the call must wait for a yes first.
    pub approval: Option<ApprovalLimits>,
    /// The entry keeps the delegate's conversation across calls (`session: persistent`).
    pub persistent: bool,
    /// How many of the caller's recent messages the delegate is shown (`share_context`).
    pub shared_messages: usize,
    /// Set when the call is narrowed: what its caller could call.
    pub reach: Option<Vec<String>>,
    /// Set when the call is narrowed: the approval its caller could call each of
    /// those under, at its strictest along the chain.
    pub floor: Option<BTreeMap<String, Approval>>,
}

fn refusal(kind: CallErrorKind, message: impl Into<String>) -> CallError {
    CallError::new(kind, message)
}

/// Reads a model's tool call against the tools it was offered.
pub(super) fn delegation_from_tool_call(turn: &Turn, call: &ToolCall, offered: &[OfferedTool]) -> Delegation {
    let name = call.function.name.as_str();
    let raw_arguments = if call.function.arguments.trim().is_empty() { "{}" } else { call.function.arguments.as_str() };
    let parsed: Result<Value, _> = serde_json::from_str(raw_arguments);
    let request = match &parsed {
        Err(error) => Err(refusal(CallErrorKind::BadArguments, format!("arguments are not valid JSON: {error}"))),
        Ok(Value::Object(_)) => resolve(&turn.config, name, parsed.as_ref().expect("matched Ok"), offered),
        Ok(other) => Err(refusal(CallErrorKind::BadArguments, format!("arguments must be a JSON object, got {other}"))),
    };
    let target = match &request {
        Ok((target, _)) => target.clone(),
        Err(_) => parsed
            .as_ref()
            .ok()
            .and_then(|arguments| arguments.get("agent").and_then(Value::as_str).map(str::to_owned))
            .or_else(|| {
                turn.config.agents.iter().find(|agent| tool_name(&agent.name) == name).map(|agent| agent.name.clone())
            })
            .unwrap_or_else(|| name.to_string()),
    };
    Delegation {
        tool_name: name.to_string(),
        arguments: parsed.ok(),
        target,
        request: request.map(|(_, request)| request),
    }
}

/// Reads a call of `agent` made from outside the tree (`Dispatcher::run_tool_call`)
/// on behalf of `caller` (the global entries when `None`): the target must be one
/// of the caller's effective tool-agents.
pub(super) fn delegation_from_outside(
    turn: &Turn,
    caller: Option<&str>,
    agent: &str,
    request: &str,
    context: Option<&Value>,
) -> Delegation {
    let context = context.filter(|context| !context.is_null()).cloned();
    let mut arguments = serde_json::json!({ "request": request });
    if let Some(context) = &context {
        arguments["context"] = context.clone();
    }
    let offered = tool_agents_for(&turn.config, caller).into_iter().any(|tool| tool.agent == agent);
    let request = if turn.config.agent(agent).is_none() {
        Err(refusal(CallErrorKind::UnknownAgent, format!("agent {agent:?} is not configured")))
    } else if !offered {
        let whose = caller.map(|name| format!("{name:?}'s tool entries")).unwrap_or("the global tool entries".into());
        Err(refusal(CallErrorKind::NotOffered, format!("{agent:?} is not an enabled tool-agent in {whose}")))
    } else {
        Ok(DelegationRequest { role: CallRole::Tool, request: request.to_string(), context, model: None })
    };
    Delegation { tool_name: tool_name(agent), arguments: Some(arguments), target: agent.to_string(), request }
}

/// The target and request of a tool call whose arguments are a JSON object.
fn resolve(
    config: &Config,
    name: &str,
    arguments: &Value,
    offered: &[OfferedTool],
) -> Result<(String, DelegationRequest), CallError> {
    let text_argument = |field: &str| arguments.get(field).and_then(Value::as_str).map(str::to_owned);
    let required = |field: &str| {
        text_argument(field).ok_or_else(|| {
            refusal(CallErrorKind::BadArguments, format!("the `{field}` argument (a string) is required"))
        })
    };
    let Some(tool) = offered.iter().find(|tool| tool.name == name) else {
        let known_agent = config.agents.iter().any(|agent| tool_name(&agent.name) == name);
        let built_in = [ASK_AGENT, ASK_MODEL, ESCALATE].contains(&name);
        return Err(if known_agent || built_in {
            let message = format!(
                "{name:?} was not offered to this agent here (limits.max_depth, the tool entries or the call path)"
            );
            refusal(CallErrorKind::NotOffered, message)
        } else {
            refusal(CallErrorKind::UnknownTool, format!("there is no tool named {name:?}"))
        });
    };
    let context = arguments.get("context").filter(|context| !context.is_null()).cloned();
    let (target, request) = match &tool.kind {
        ToolKind::Agent(target) => {
            let request = required("request")?;
            (target.agent.clone(), DelegationRequest { role: CallRole::Tool, request, context, model: None })
        }
        ToolKind::AskAgent(targets) => {
            let agent = required("agent")?;
            let Some(target) = targets.iter().find(|target| target.agent == agent) else {
                let names: Vec<&str> = targets.iter().map(|target| target.agent.as_str()).collect();
                let message =
                    format!("agent {agent:?} is not one of the agents offered to ask_agent ({})", names.join(", "));
                return Err(refusal(CallErrorKind::NotOffered, message));
            };
            let model = text_argument("model");
            if let Some(model) = &model {
                let allowed = config.agent(&target.agent).map(|agent| agent.allowed_models.clone()).unwrap_or_default();
                if !allowed.contains(model) {
                    let message = format!(
                        "model {model:?} is not among {:?}'s allowed_models ({})",
                        target.agent,
                        allowed.join(", ")
                    );
                    return Err(refusal(CallErrorKind::BadArguments, message));
                }
            }
            let request = required("request")?;
            (target.agent.clone(), DelegationRequest { role: CallRole::Tool, request, context, model })
        }
        ToolKind::AskModel(target) => {
            let request = required("question")?;
            (target.agent.clone(), DelegationRequest { role: CallRole::Advisor, request, context: None, model: None })
        }
        ToolKind::Escalate => {
            return Err(refusal(CallErrorKind::BadArguments, "escalate must be the only tool called in its response"))
        }
    };
    Ok((target, request))
}

/// Decides whether `delegation`, made by `caller`, may run at `depth`. Counts the
/// call against the turn's ceiling when it gets that far.
pub(super) fn admit(
    turn: &Turn,
    caller: &Caller<'_>,
    delegation: &Delegation,
    depth: u32,
) -> Result<Admitted, CallError> {
    let target_agent = delegation.target.as_str();
    // The cycle guard speaks first: a call back up the path is refused as a cycle
    // whether or not the tool was offered (a model can invent the name).
    if caller.path.iter().any(|agent| agent == target_agent) {
        let message = format!(
            "{target_agent:?} is already on the call path ({}); a call back to it is refused",
            caller.path.join(" → ")
        );
        return Err(refusal(CallErrorKind::Cycle, message));
    }
    let request = delegation.request.as_ref().map_err(Clone::clone)?;
    let Some(target) = turn.config.agent(target_agent).cloned() else {
        return Err(refusal(CallErrorKind::UnknownAgent, format!("agent {target_agent:?} is not configured")));
    };
    if target.provider == Provider::ClaudeCli {
        let message =
            format!("{target_agent:?} is a claude-cli agent: it can call tool-agents but is never called as one");
        return Err(refusal(CallErrorKind::NotOffered, message));
    }
    let ceiling = turn.limits.effective_max_calls_per_turn();
    if turn.delegations.fetch_add(1, Ordering::SeqCst) >= ceiling {
        let message = format!("this turn already made {ceiling} tool-agent calls (limits.max_calls_per_turn)");
        return Err(refusal(CallErrorKind::MaxCallsPerTurn, message));
    }
    if let Some(reason) = turn.over_budget() {
        return Err(refusal(CallErrorKind::Budget, reason));
    }
    let entry = entry_behind(&turn.config, caller.agent.unwrap_or_default(), request.role, target_agent);
    let own = approval_in_force(&turn.config, entry.as_ref(), &target);
    // Narrowed, a delegate calls no agent more freely than its callers could.
    let approval = strictest(own, carried_down(caller, target_agent));
    if own == Approval::Deny {
        let message = format!("calls to {target_agent:?} are denied by the config (approval: deny)");
        return Err(refusal(CallErrorKind::Denied, message));
    }
    if approval == Approval::Deny {
        let message = format!(
            "calls to {target_agent:?} are denied above {:?} (approval: deny), and narrowing \
             (limits.narrow_delegation) carries that down the chain",
            caller.agent.unwrap_or_default()
        );
        return Err(refusal(CallErrorKind::Denied, message));
    }
    let mut limits = turn.config.limits_for(&target, entry.as_ref());
    // Once a chain is narrowed it stays narrowed below, whatever the entries say.
    let narrowed = limits.narrows() || caller.reach.is_some();
    if narrowed {
        limits = limits.within(caller.limits);
        limits.narrow_delegation = Some(true);
    }
    let approval = (approval == Approval::Ask).then(|| ApprovalLimits {
        may_delegate: depth < limits.effective_max_depth(),
        depth,
        max_depth: limits.effective_max_depth(),
        calls_left: ceiling.saturating_sub(turn.delegations.load(Ordering::SeqCst)),
        timeout_secs: limits.timeout_secs.or(target.timeout_secs).map(|secs| secs.min(u64::from(u32::MAX)) as u32),
    });
    Ok(Admitted {
        target,
        limits,
        approval,
        persistent: entry.as_ref().and_then(|entry| entry.session) == Some(SessionMode::Persistent),
        shared_messages: entry.as_ref().and_then(|entry| entry.share_context).unwrap_or(0) as usize,
        reach: narrowed.then(|| caller.could_call.to_vec()),
        floor: narrowed.then(|| floor_of(turn, caller)),
    })
}

/// The approval a call to `target` runs under: its entry's, else the agent's own.
fn approval_in_force(config: &Config, entry: Option<&AgentToolEntry>, target: &AgentConfig) -> Approval {
    match entry {
        Some(entry) => config.approval_of(entry),
        None => target.approval.unwrap_or_default(),
    }
}

/// The approval carried down to a narrowed `caller` for calls to `agent` (`auto`
/// when it is not narrowed).
fn carried_down(caller: &Caller<'_>, agent: &str) -> Approval {
    caller.floor.and_then(|floor| floor.get(agent)).copied().unwrap_or(Approval::Auto)
}

/// `deny` over `ask` over `auto`.
fn strictest(a: Approval, b: Approval) -> Approval {
    let rank = |approval| match approval {
        Approval::Auto => 0,
        Approval::Ask => 1,
        Approval::Deny => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// For a call narrowed to what `caller` could call: the approval `caller` could
/// call each of those under, at its strictest with what was carried down to it.
fn floor_of(turn: &Turn, caller: &Caller<'_>) -> BTreeMap<String, Approval> {
    let name = caller.agent.unwrap_or_default();
    caller
        .could_call
        .iter()
        .map(|agent| {
            let entry = entry_behind(&turn.config, name, CallRole::Tool, agent);
            // An agent not configured is refused before its approval counts.
            let own = turn
                .config
                .agent(agent)
                .map_or(Approval::default(), |target| approval_in_force(&turn.config, entry.as_ref(), target));
            (agent.clone(), strictest(own, carried_down(caller, agent)))
        })
        .collect()
}

/// A tool call of a narrowed caller for a tool-agent its own entries offer but its
/// reach took away: said as narrowing (typed), not as a tool that was never there.
pub(super) fn narrowing_refusal(turn: &Turn, caller: &Caller<'_>, delegation: &mut Delegation) {
    let (Some(reach), Some(agent)) = (caller.reach, caller.agent) else { return };
    let not_offered = matches!(&delegation.request, Err(error) if error.kind == CallErrorKind::NotOffered);
    let target = delegation.target.as_str();
    if !not_offered || reach.iter().any(|name| name == target) {
        return;
    }
    let own = tool_agents_for(&turn.config, Some(agent)).into_iter().any(|tool| tool.agent == target);
    if own {
        let above = caller.path.iter().rev().nth(1).map(String::as_str).unwrap_or("its caller");
        let message = format!(
            "{agent:?} may not call {target:?} here: narrowing (limits.narrow_delegation) keeps a delegate to what its caller {above:?} could call"
        );
        delegation.request = Err(refusal(CallErrorKind::Narrowed, message));
    }
}

/// The tool entry that offered `target` to `caller` (after the merge), or the
/// advisor entry for an advisor call.
fn entry_behind(config: &Config, caller: &str, role: CallRole, target: &str) -> Option<AgentToolEntry> {
    if role == CallRole::Advisor {
        return config.advisor.clone();
    }
    let names = AgentNames::of(config);
    merge_entries(config, &names, caller)
        .into_iter()
        .find(|merged| merged.entry.agent == target)
        .map(|merged| merged.entry.clone())
}

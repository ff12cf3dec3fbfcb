//! What an MCP client gets back from a tool-agent call: the fenced answer as the
//! text content (the same bytes a calling model receives) and, as structured
//! content described by the tool's output schema, that same answer as `result`
//! with the status, usage (own and subtree), cost and model steps. Clients that
//! hand their model only the structured content (Claude Code, Codex) so give it
//! the answer too. Refusals and failures are tool errors (`isError`) carrying the
//! structured error, `result` then saying why in words. Pure.
//!
//! The MCP specification suggests the text block of a structured result be that
//! result's JSON; ours is the answer itself, the same text `result` holds, because
//! a text-reading client gives it to its model as it is, and a model should read
//! the fence and the answer, not JSON escapes of them.

use serde_json::{json, Value};
use switchboard_core::dispatch::ToolCallOutcome;
use switchboard_core::event::CallStatus;

/// The JSON Schema of the structured content every tool-agent result carries.
pub fn output_schema() -> Value {
    let usage = json!({
        "type": ["object", "null"],
        "properties": {
            "input_tokens": { "type": "integer" },
            "output_tokens": { "type": "integer" },
            "total_tokens": { "type": "integer" }
        },
        "required": ["input_tokens", "output_tokens", "total_tokens"]
    });
    json!({
        "type": "object",
        "properties": {
            "result": {
                "type": "string",
                "description": "What the calling model should read: the agent's answer, fenced as untrusted data; \
                                when the call did not run or failed, why, in words."
            },
            "agent": { "type": "string", "description": "The tool-agent that answered." },
            "status": {
                "type": "string",
                "enum": ["ok", "error", "cancelled", "denied", "limited"],
                "description": "How the call ended."
            },
            "usage": usage,
            "usage_total": usage,
            "cost": { "type": ["number", "null"], "description": "Cost of the agent's own usage at its prices." },
            "cost_total": { "type": ["number", "null"], "description": "Cost of the call and its subtree." },
            "steps": { "type": "integer", "description": "Model steps the call took." },
            "error": {
                "type": ["object", "null"],
                "properties": { "kind": { "type": "string" }, "message": { "type": "string" } },
                "required": ["kind", "message"]
            }
        },
        "required": ["result", "agent", "status", "usage", "usage_total", "cost", "cost_total", "steps", "error"]
    })
}

/// The structured content of a finished call (`hint` as for `text`).
pub fn structured(agent: &str, outcome: &ToolCallOutcome, hint: Option<&str>) -> Value {
    json!({
        "result": text(outcome, hint),
        "agent": agent,
        "status": outcome.status.as_str(),
        "usage": outcome.usage,
        "usage_total": outcome.usage_total,
        "cost": outcome.cost,
        "cost_total": outcome.cost_total,
        "steps": outcome.steps,
        "error": outcome.error,
    })
}

/// Whether the client should see the result as a tool error.
pub fn is_error(outcome: &ToolCallOutcome) -> bool {
    outcome.status != CallStatus::Ok
}

/// The text content: the fenced answer for a call that ran; for one that did not,
/// the error in words (with `hint` appended when the server knows more, such as why
/// no one could approve it).
pub fn text(outcome: &ToolCallOutcome, hint: Option<&str>) -> String {
    if !is_error(outcome) {
        return outcome.delivered.clone();
    }
    let mut text = match &outcome.error {
        Some(error) => format!("{} ({}): {}", outcome.status.as_str(), error.kind.as_str(), error.message),
        None => format!("the call ended as {}", outcome.status.as_str()),
    };
    if let Some(hint) = hint {
        text.push('\n');
        text.push_str(hint);
    }
    text
}

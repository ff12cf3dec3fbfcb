//! The function definitions agents are offered, as sent on the wire: snapshots
//! (expect-test; `UPDATE_EXPECT=1 cargo test` rewrites them after a deliberate change).

use expect_test::{expect, Expect};
use switchboard_core::config::DelegationTool;
use switchboard_core::tools::offered_for_root;
use switchboard_core::Config;

fn check(config: &Config, agent: &str, expected: Expect) {
    let definitions: Vec<serde_json::Value> =
        offered_for_root(config, Some(agent)).into_iter().map(|tool| tool.definition).collect();
    expected.assert_eq(&serde_json::to_string_pretty(&definitions).unwrap());
}

#[test]
fn the_demo_primary_is_offered_escalate_then_its_tool_agents() {
    check(
        &Config::demo_default(),
        "assistant",
        expect![[r#"
            [
              {
                "type": "function",
                "function": {
                  "name": "escalate",
                  "description": "Hand this turn to the escalation agent (expert) when the request is beyond you. It answers the user directly.",
                  "parameters": {
                    "type": "object",
                    "properties": {
                      "reason": {
                        "type": "string",
                        "description": "Why the turn needs the escalation agent."
                      }
                    },
                    "required": [
                      "reason"
                    ]
                  }
                }
              },
              {
                "type": "function",
                "function": {
                  "name": "agent_researcher",
                  "description": "Research agent. Send it a question; it returns findings as a short list.",
                  "parameters": {
                    "type": "object",
                    "properties": {
                      "request": {
                        "type": "string",
                        "description": "The request to send to the agent."
                      },
                      "context": {
                        "type": "object",
                        "description": "Optional structured data the agent needs (JSON); passed to it as labelled context."
                      }
                    },
                    "required": [
                      "request"
                    ]
                  }
                }
              },
              {
                "type": "function",
                "function": {
                  "name": "agent_summariser",
                  "description": "Fast summarisation agent. Pass a block of text; returns a concise summary.",
                  "parameters": {
                    "type": "object",
                    "properties": {
                      "request": {
                        "type": "string",
                        "description": "The request to send to the agent."
                      },
                      "context": {
                        "type": "object",
                        "description": "Optional structured data the agent needs (JSON); passed to it as labelled context."
                      }
                    },
                    "required": [
                      "request"
                    ]
                  }
                }
              }
            ]"#]],
    );
}

#[test]
fn the_ask_agent_form_is_one_function_with_an_enum() {
    let mut config = Config::demo_default();
    config.delegation_tool = Some(DelegationTool::AskAgent);
    config.escalation = None;
    check(
        &config,
        "assistant",
        expect![[r#"
        [
          {
            "type": "function",
            "function": {
              "name": "ask_agent",
              "description": "Ask another agent to do a task and return its answer. Agents:\n- researcher: Research agent. Send it a question; it returns findings as a short list.\n- summariser: Fast summarisation agent. Pass a block of text; returns a concise summary.",
              "parameters": {
                "type": "object",
                "properties": {
                  "agent": {
                    "type": "string",
                    "enum": [
                      "researcher",
                      "summariser"
                    ],
                    "description": "The agent to ask."
                  },
                  "request": {
                    "type": "string",
                    "description": "The request to send to the agent."
                  },
                  "context": {
                    "type": "object",
                    "description": "Optional structured data the agent needs (JSON); passed to it as labelled context."
                  }
                },
                "required": [
                  "agent",
                  "request"
                ]
              }
            }
          }
        ]"#]],
    );
}

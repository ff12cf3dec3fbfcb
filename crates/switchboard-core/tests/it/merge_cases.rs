//! The tool-agent merge (global entries, per-agent overrides, local entries), proven on
//! a table of cases and by properties.

use proptest::prelude::*;
use switchboard_core::config::{effective_tools, merged_tools, Config, ToolScope};

use crate::support::{agent, config, disabled, entry};

/// (agent, scope, enabled) per merged entry, in order.
type Row = (&'static str, ToolScope, bool);

fn check(config: &Config, caller: &str, expected: &[Row]) {
    let merged: Vec<(String, ToolScope, bool)> =
        merged_tools(config, caller).into_iter().map(|tool| (tool.agent, tool.scope, tool.enabled)).collect();
    let expected: Vec<(String, ToolScope, bool)> =
        expected.iter().map(|(agent, scope, enabled)| (agent.to_string(), *scope, *enabled)).collect();
    assert_eq!(merged, expected, "merged list for {caller}");
    let effective: Vec<String> = effective_tools(config, caller).into_iter().map(|tool| tool.agent).collect();
    let expected_effective: Vec<String> = expected.iter().filter(|row| row.2).map(|row| row.0.clone()).collect();
    assert_eq!(effective, expected_effective, "effective list for {caller}");
}

/// The design's worked example: qwen sees both globals; gemma overrides aider's
/// description and disables it.
fn spec_example() -> Config {
    let mut gemma = agent("gemma");
    gemma.tools = vec![disabled("aider", "Apply a code edit. Describe the change in plain English.")];
    config(
        vec![agent("qwen"), gemma, agent("aider"), agent("summariser")],
        vec![entry("aider", "Specialist code-editing agent."), entry("summariser", "Fast summarisation agent.")],
    )
}

#[test]
fn spec_example_merges_as_the_spec_says() {
    let config = spec_example();
    check(&config, "qwen", &[("aider", ToolScope::Global, true), ("summariser", ToolScope::Global, true)]);
    check(&config, "gemma", &[("aider", ToolScope::Override, false), ("summariser", ToolScope::Global, true)]);
    let gemma = merged_tools(&config, "gemma");
    assert_eq!(gemma[0].description, "Apply a code edit. Describe the change in plain English.");
    assert_eq!(gemma[0].tool_name, "agent_aider");
}

#[test]
fn merge_table() {
    struct Case {
        name: &'static str,
        config: Config,
        caller: &'static str,
        expected: Vec<Row>,
    }
    let with_tools = |name: &str, tools| {
        let mut configured = agent(name);
        configured.tools = tools;
        configured
    };
    let cases = vec![
        Case {
            name: "self-reference is removed (cycle guard)",
            config: config(vec![agent("a"), agent("b")], vec![entry("a", "A"), entry("b", "B")]),
            caller: "a",
            expected: vec![("b", ToolScope::Global, true)],
        },
        Case {
            name: "a per-agent self entry is removed too",
            config: config(vec![with_tools("a", vec![entry("a", "me")]), agent("b")], vec![]),
            caller: "a",
            expected: vec![],
        },
        Case {
            name: "unknown agents are removed",
            config: config(vec![agent("a"), agent("b")], vec![entry("ghost", "G"), entry("b", "B")]),
            caller: "a",
            expected: vec![("b", ToolScope::Global, true)],
        },
        Case {
            name: "local entries are appended after globals, in their order",
            config: config(
                vec![with_tools("a", vec![entry("d", "D"), entry("c", "C")]), agent("b"), agent("c"), agent("d")],
                vec![entry("b", "B")],
            ),
            caller: "a",
            expected: vec![
                ("b", ToolScope::Global, true),
                ("d", ToolScope::Local, true),
                ("c", ToolScope::Local, true),
            ],
        },
        Case {
            name: "an override replaces in place, keeping the global position",
            config: config(
                vec![with_tools("a", vec![entry("c", "C for a")]), agent("b"), agent("c"), agent("d")],
                vec![entry("b", "B"), entry("c", "C"), entry("d", "D")],
            ),
            caller: "a",
            expected: vec![
                ("b", ToolScope::Global, true),
                ("c", ToolScope::Override, true),
                ("d", ToolScope::Global, true),
            ],
        },
        Case {
            name: "a per-agent entry re-enables a globally disabled tool",
            config: config(vec![with_tools("a", vec![entry("b", "B on")]), agent("b")], vec![disabled("b", "B")]),
            caller: "a",
            expected: vec![("b", ToolScope::Override, true)],
        },
        Case {
            name: "a globally disabled tool stays disabled for others",
            config: config(
                vec![with_tools("a", vec![entry("b", "B on")]), agent("b"), agent("c")],
                vec![disabled("b", "B")],
            ),
            caller: "c",
            expected: vec![("b", ToolScope::Global, false)],
        },
        Case {
            name: "an unknown caller gets the globals minus unknown agents",
            config: config(vec![agent("b")], vec![entry("b", "B"), entry("ghost", "G")]),
            caller: "nobody",
            expected: vec![("b", ToolScope::Global, true)],
        },
        Case {
            name: "another agent's per-agent entries do not leak",
            config: config(vec![with_tools("a", vec![entry("c", "C")]), agent("b"), agent("c")], vec![]),
            caller: "b",
            expected: vec![],
        },
        Case { name: "empty config", config: Config::default(), caller: "a", expected: vec![] },
    ];
    for case in cases {
        eprintln!("case: {}", case.name);
        check(&case.config, case.caller, &case.expected);
    }
}

fn arbitrary_config() -> impl Strategy<Value = (Config, String)> {
    let names = prop::collection::vec(prop::sample::select(vec!["a", "b", "c", "d", "e", "ghost", "void"]), 0..6);
    (
        prop::collection::vec(("[a-e]", prop::collection::vec(("[a-g]", any::<Option<bool>>()), 0..5)), 1..6),
        prop::collection::vec(("[a-g]", any::<Option<bool>>()), 0..6),
        names,
        "[a-f]",
    )
        .prop_map(|(agents, globals, _unused, caller)| {
            let mut configured = Vec::new();
            for (name, tools) in agents {
                if configured.iter().any(|existing: &switchboard_core::AgentConfig| existing.name == name) {
                    continue;
                }
                let mut new_agent = agent(&name);
                let mut seen = Vec::new();
                for (target, enabled) in tools {
                    if seen.contains(&target) {
                        continue;
                    }
                    seen.push(target.clone());
                    let mut tool = entry(&target, &format!("{name}->{target}"));
                    tool.enabled = enabled;
                    new_agent.tools.push(tool);
                }
                configured.push(new_agent);
            }
            let mut seen = Vec::new();
            let mut global_entries = Vec::new();
            for (target, enabled) in globals {
                if seen.contains(&target) {
                    continue;
                }
                seen.push(target.clone());
                let mut tool = entry(&target, &format!("global->{target}"));
                tool.enabled = enabled;
                global_entries.push(tool);
            }
            (config(configured, global_entries), caller)
        })
}

proptest! {
    #[test]
    fn merge_properties((config, caller) in arbitrary_config()) {
        let merged = merged_tools(&config, &caller);
        let effective = effective_tools(&config, &caller);
        // Never the caller, never an unknown agent, never a duplicate.
        for tool in &merged {
            prop_assert_ne!(&tool.agent, &caller);
            prop_assert!(config.agent(&tool.agent).is_some());
        }
        let mut names: Vec<&str> = merged.iter().map(|tool| tool.agent.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        prop_assert_eq!(names.len(), merged.len());
        // Every enabled per-agent entry of a known, non-self agent appears, with its own description.
        if let Some(own) = config.agent(&caller) {
            for own_entry in &own.tools {
                let eligible = own_entry.agent != caller && config.agent(&own_entry.agent).is_some();
                let found = effective.iter().find(|tool| tool.agent == own_entry.agent);
                if eligible && own_entry.is_enabled() {
                    prop_assert!(found.is_some(), "missing {}", own_entry.agent);
                    prop_assert_eq!(&found.unwrap().description, &own_entry.description);
                }
                if !own_entry.is_enabled() {
                    prop_assert!(found.is_none());
                }
            }
        }
        // The effective list is exactly the enabled part of the merged list, in order.
        let enabled: Vec<&str> = merged.iter().filter(|tool| tool.enabled).map(|tool| tool.agent.as_str()).collect();
        let effective_names: Vec<&str> = effective.iter().map(|tool| tool.agent.as_str()).collect();
        prop_assert_eq!(enabled, effective_names);
        // Scopes: global iff no per-agent twin.
        for tool in &merged {
            let own = config.agent(&caller).map(|own| own.tools.iter().any(|own_entry| own_entry.agent == tool.agent)).unwrap_or(false);
            let global = config.agent_tools.iter().any(|global_entry| global_entry.agent == tool.agent);
            let expected = match (own, global) { (true, true) => ToolScope::Override, (true, false) => ToolScope::Local, _ => ToolScope::Global };
            prop_assert_eq!(tool.scope, expected);
        }
    }
}

/// Each entry's approval in force, and which setting decided it: the entry's own,
/// else the called agent's, else ask; an agent's own entry beside the global one.
#[test]
fn effective_approvals_say_which_setting_decided() {
    use switchboard_core::config::{AgentApproval, Approval, ApprovalFrom, EntryApproval};
    let mut careful = agent("careful");
    careful.approval = Some(Approval::Deny);
    let mut boss = agent("boss");
    let mut own = entry("careful", "Boss's own entry.");
    own.approval = Some(Approval::Auto);
    boss.tools = vec![own];
    let config = config(
        vec![boss, careful, agent("plain")],
        vec![entry("careful", "Careful agent."), entry("plain", "Plain agent.")],
    );
    let approvals = config.effective_approvals();
    let entry_row = |owner: Option<&str>, tool: &str, approval, from| EntryApproval {
        owner: owner.map(str::to_owned),
        tool_agent: tool.to_owned(),
        approval,
        from,
    };
    assert_eq!(
        approvals.entries,
        vec![
            entry_row(None, "careful", Approval::Deny, ApprovalFrom::Agent),
            entry_row(None, "plain", Approval::Ask, ApprovalFrom::Default),
            entry_row(Some("boss"), "careful", Approval::Auto, ApprovalFrom::Entry),
        ]
    );
    let agent_row = |name: &str, approval, from| AgentApproval { agent: name.to_owned(), approval, from };
    assert_eq!(
        approvals.agents,
        vec![
            agent_row("boss", Approval::Ask, ApprovalFrom::Default),
            agent_row("careful", Approval::Deny, ApprovalFrom::Agent),
            agent_row("plain", Approval::Ask, ApprovalFrom::Default),
        ]
    );
    // The dispatcher's answer is the same one.
    for row in &approvals.entries {
        let list = match &row.owner {
            None => &config.agent_tools,
            Some(owner) => &config.agent(owner).unwrap().tools,
        };
        let entry = list.iter().find(|entry| entry.agent == row.tool_agent).unwrap();
        assert_eq!(config.approval_of(entry), row.approval);
    }
}

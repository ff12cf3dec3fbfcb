//! Round trip, atomic writes, stale-copy conflicts, the edit operations and their
//! eviction reports, against real files.

use std::fs;

use serde_json::Value;
use switchboard_core::config::edit::{apply, apply_to, eviction_set, Edit, EditError, EntryFate, ToolTarget};
use switchboard_core::config::store::{self, ConfigError};
use switchboard_core::config::{merged_tools, AgentConfig, AgentToolEntry, Approval, Config, Provider};

const WITH_UNKNOWN_FIELDS: &str = r#"{
  "theme_of_the_future": {"colour": "teal"},
  "agent_tools": [
    {"agent": "aider", "description": "Edits code.", "priority": 3}
  ],
  "agents": [
    {"name": "qwen", "provider": "local", "url": "http://localhost:8080", "model": "qwen2.5", "quantisation": "q4"},
    {"name": "aider", "provider": "aider-cli"}
  ],
  "limits": {"max_depth": 2, "future_limit": 9}
}
"#;

#[test]
fn round_trip_keeps_unknown_fields() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    fs::write(&path, WITH_UNKNOWN_FIELDS).unwrap();
    let loaded = store::load(&path).unwrap();
    let edit = Edit::DisableTool { target: ToolTarget::Global, tool_agent: "aider".into() };
    apply(&path, &loaded.version, &edit).unwrap();
    let written: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written["theme_of_the_future"]["colour"], "teal");
    assert_eq!(written["agent_tools"][0]["priority"], 3);
    assert_eq!(written["agent_tools"][0]["enabled"], false);
    assert_eq!(written["agents"][0]["quantisation"], "q4");
    assert_eq!(written["limits"]["future_limit"], 9);
    assert_eq!(written["limits"]["max_depth"], 2);
    // Nothing the user did not write appears (no defaults filled in).
    assert!(written["agents"][1].get("tools").is_none());
    assert!(written.get("primary").is_none());
}

#[test]
fn a_missing_file_is_created_with_the_demo_default() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("nested").join("config.json");
    let loaded = store::load_or_create(&path).unwrap();
    assert_eq!(loaded.config, Config::demo_default());
    assert!(path.exists());
    let again = store::load_or_create(&path).unwrap();
    assert_eq!(again.version, loaded.version, "an existing file is not rewritten");
}

#[test]
fn a_stale_edit_is_refused_and_the_hand_edit_survives() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let loaded = store::load_or_create(&path).unwrap();
    let hand_edited = fs::read_to_string(&path).unwrap().replace("Research agent.", "Research agent, edited by hand.");
    fs::write(&path, &hand_edited).unwrap();
    let edit = Edit::DisableTool { target: ToolTarget::Global, tool_agent: "researcher".into() };
    match apply(&path, &loaded.version, &edit) {
        Err(EditError::Config(ConfigError::Conflict { .. })) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(fs::read_to_string(&path).unwrap(), hand_edited);
}

#[test]
fn an_invalid_edit_writes_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let loaded = store::load_or_create(&path).unwrap();
    let before = fs::read(&path).unwrap();
    let edit = Edit::AddTool { target: ToolTarget::Global, tool_agent: "researcher-2".into(), description: "".into() };
    assert!(matches!(apply(&path, &loaded.version, &edit), Err(EditError::Config(ConfigError::Invalid { .. }))));
    assert_eq!(fs::read(&path).unwrap(), before);
    let leftovers: Vec<_> = fs::read_dir(folder.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temp file left behind: {leftovers:?}");
}

#[test]
fn atomic_write_replaces_whole_files() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    store::write_atomic(&path, b"first").unwrap();
    store::write_atomic(&path, b"second, longer").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"second, longer");
    assert_eq!(fs::read_dir(folder.path()).unwrap().count(), 1);
}

#[test]
fn tool_edits_follow_the_spec_rules() {
    let base = Config::demo_default();
    let researcher = || "researcher".to_string();
    let for_assistant = || ToolTarget::Agent("assistant".into());
    struct Case {
        name: &'static str,
        edit: Edit,
        check: fn(&Config),
    }
    let cases = vec![
        Case {
            name: "enable for an agent with no entry inherits the global description",
            edit: Edit::EnableTool { target: for_assistant(), tool_agent: researcher() },
            check: |config| {
                let own = &config.agent("assistant").unwrap().tools[0];
                assert_eq!(own.agent, "researcher");
                assert_eq!(own.enabled, Some(true));
                assert_eq!(own.description, config.agent_tools[0].description);
            },
        },
        Case {
            name: "disable for an agent creates a disabled override",
            edit: Edit::DisableTool { target: for_assistant(), tool_agent: researcher() },
            check: |config| {
                let merged = merged_tools(config, "assistant");
                assert!(!merged.iter().find(|tool| tool.agent == "researcher").unwrap().enabled);
                assert!(config.agent_tools[0].is_enabled(), "the global entry is untouched");
            },
        },
        Case {
            name: "disable globally keeps the entry",
            edit: Edit::DisableTool { target: ToolTarget::Global, tool_agent: researcher() },
            check: |config| {
                assert_eq!(config.agent_tools.len(), 2);
                assert_eq!(config.agent_tools[0].enabled, Some(false));
            },
        },
        Case {
            name: "remove deletes the entry",
            edit: Edit::RemoveTool { target: ToolTarget::Global, tool_agent: researcher() },
            check: |config| assert!(config.agent_tools.iter().all(|entry| entry.agent != "researcher")),
        },
        Case {
            name: "add appends to an agent's list",
            edit: Edit::AddTool {
                target: ToolTarget::Agent("expert".into()),
                tool_agent: researcher(),
                description: "Ask for facts.".into(),
            },
            check: |config| assert_eq!(config.agent("expert").unwrap().tools[0].description, "Ask for facts."),
        },
        Case {
            name: "renaming an agent carries its roles",
            edit: Edit::EditAgent {
                name: "assistant".into(),
                agent: {
                    let mut renamed = Config::demo_default().agent("assistant").unwrap().clone();
                    renamed.name = "helper".into();
                    renamed
                },
            },
            check: |config| assert_eq!(config.primary.as_deref(), Some("helper")),
        },
        Case {
            name: "renaming an agent carries the tool entries that name it",
            edit: Edit::EditAgent {
                name: "researcher".into(),
                agent: {
                    let mut renamed = Config::demo_default().agent("researcher").unwrap().clone();
                    renamed.name = "scout".into();
                    renamed
                },
            },
            check: |config| {
                assert_eq!(config.agent_tools[0].agent, "scout");
                assert!(merged_tools(config, "assistant").iter().any(|tool| tool.tool_name == "agent_scout"));
            },
        },
        Case {
            name: "set_tool replaces every field of an entry and keeps the fields it does not know",
            edit: Edit::SetTool {
                target: ToolTarget::Global,
                entry: {
                    let mut entry = AgentToolEntry::new("researcher", "Look things up.");
                    entry.approval = Some(Approval::Auto);
                    entry.share_context = Some(3);
                    entry
                },
                previous: None,
            },
            check: |config| {
                let entry = &config.agent_tools[0];
                assert_eq!(
                    (entry.description.as_str(), entry.approval, entry.share_context),
                    ("Look things up.", Some(Approval::Auto), Some(3))
                );
                assert_eq!(entry.extra.get("note"), Some(&serde_json::json!("kept")));
                assert_eq!(config.agent_tools.len(), 2);
            },
        },
        Case {
            name: "set_tool with previous moves the entry to another tool-agent",
            edit: Edit::SetTool {
                target: ToolTarget::Global,
                entry: AgentToolEntry::new("expert", "Ask the expert."),
                previous: Some("researcher".into()),
            },
            check: |config| {
                let names: Vec<&str> = config.agent_tools.iter().map(|entry| entry.agent.as_str()).collect();
                assert_eq!(names, ["expert", "summariser"]);
            },
        },
        Case {
            name: "set_tool adds an entry an agent's list lacks",
            edit: Edit::SetTool {
                target: ToolTarget::Agent("expert".into()),
                entry: AgentToolEntry::new("researcher", "Facts, for the expert."),
                previous: None,
            },
            check: |config| assert_eq!(config.agent("expert").unwrap().tools.len(), 1),
        },
        Case {
            name: "removing an agent with its entries removes them from every list",
            edit: Edit::RemoveAgent { name: "researcher".into(), tool_entries: EntryFate::Remove },
            check: |config| {
                assert!(config.agent("researcher").is_none());
                assert!(config.agent_tools.iter().all(|entry| entry.agent != "researcher"));
                assert!(config.agents.iter().all(|agent| agent.tools.iter().all(|entry| entry.agent != "researcher")));
            },
        },
        Case {
            name: "removing an agent and keeping its entries leaves them for a later agent of that name",
            edit: Edit::RemoveAgent { name: "researcher".into(), tool_entries: EntryFate::Keep },
            check: |config| {
                assert!(config.agent("researcher").is_none());
                assert!(config.agent_tools.iter().any(|entry| entry.agent == "researcher"));
            },
        },
        Case {
            name: "setup replaces the demo agents with the wizard's answers at once",
            edit: Edit::Setup {
                agents: vec![
                    AgentConfig::new("ollama-llama3", Provider::OpenAiCompatible),
                    AgentConfig::new("aider", Provider::AiderCli),
                ],
                replace_agents: true,
                primary: Some("ollama-llama3".into()),
                escalation: None,
                agent_tools: vec![AgentToolEntry::new("aider", "Edits code in the repository.")],
            },
            check: |config| {
                let names: Vec<&str> = config.agents.iter().map(|agent| agent.name.as_str()).collect();
                assert_eq!(names, ["ollama-llama3", "aider"]);
                assert_eq!(config.primary.as_deref(), Some("ollama-llama3"));
                assert_eq!(config.escalation, None);
                assert_eq!(config.agent_tools.len(), 1);
                assert_eq!(merged_tools(config, "ollama-llama3")[0].tool_name, "agent_aider");
            },
        },
    ];
    for case in cases {
        let mut config = base.clone();
        config.agent_tools[0].extra.insert("note".into(), serde_json::json!("kept"));
        apply_to(&mut config, &case.edit).unwrap_or_else(|error| panic!("{}: {error}", case.name));
        (case.check)(&config);
    }

    let refusals = vec![
        Edit::EnableTool { target: ToolTarget::Global, tool_agent: "expert".into() },
        Edit::EnableTool { target: for_assistant(), tool_agent: "expert".into() },
        Edit::RemoveTool { target: for_assistant(), tool_agent: researcher() },
        Edit::AddTool { target: ToolTarget::Global, tool_agent: researcher(), description: "again".into() },
        Edit::RemoveAgent { name: "assistant".into(), tool_entries: Default::default() },
        Edit::SetPrimary { agent: Some("nobody".into()) },
        Edit::DisableTool { target: ToolTarget::Agent("nobody".into()), tool_agent: researcher() },
    ];
    let setup = |primary: &str| Edit::Setup {
        agents: vec![AgentConfig::new("local-llama", Provider::OpenAiCompatible)],
        replace_agents: true,
        primary: Some(primary.into()),
        escalation: None,
        agent_tools: vec![],
    };
    let refusals = refusals
        .into_iter()
        .chain([
            // A setup naming a primary it does not add leaves everything as it was.
            setup("assistant"),
            Edit::SetTool {
                target: ToolTarget::Global,
                entry: AgentToolEntry::new("expert", "x"),
                previous: Some("nobody".into()),
            },
            Edit::SetTool {
                target: ToolTarget::Global,
                entry: AgentToolEntry::new("researcher", "x"),
                previous: Some("summariser".into()),
            },
        ])
        .collect::<Vec<_>>();
    for edit in refusals {
        let mut config = base.clone();
        assert!(apply_to(&mut config, &edit).is_err(), "{edit:?} should be refused");
        assert_eq!(config, base, "{edit:?} changed the config although it was refused");
    }
}

#[test]
fn eviction_names_exactly_the_affected_agents() {
    let base = Config::demo_default();
    let evicted = |edit: Edit| {
        let mut config = base.clone();
        apply_to(&mut config, &edit).unwrap();
        let mut names = eviction_set(&base, &config);
        names.sort();
        names
    };
    // A global entry change affects every agent whose merged list holds it: everyone but the target itself.
    assert_eq!(
        evicted(Edit::DisableTool { target: ToolTarget::Global, tool_agent: "researcher".into() }),
        vec!["assistant", "expert", "summariser"]
    );
    // A per-agent change affects that agent only.
    assert_eq!(
        evicted(Edit::DisableTool { target: ToolTarget::Agent("assistant".into()), tool_agent: "researcher".into() }),
        vec!["assistant"]
    );
    // Editing an agent evicts it; removing one evicts it and whoever was offered it.
    let mut slower = base.agent("summariser").unwrap().clone();
    slower.delay_ms = Some(500);
    assert_eq!(evicted(Edit::EditAgent { name: "summariser".into(), agent: slower }), vec!["summariser"]);
    assert_eq!(
        evicted(Edit::RemoveAgent { name: "summariser".into(), tool_entries: EntryFate::Keep }),
        vec!["assistant", "expert", "researcher", "summariser"]
    );
    assert_eq!(evicted(Edit::SetEscalation { agent: None }), Vec::<String>::new());
}

#[test]
fn concurrent_savers_never_lose_an_edit() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let agents: Vec<Value> =
        (0..24).map(|index| serde_json::json!({ "name": format!("a{index}"), "provider": "demo" })).collect();
    fs::write(&path, serde_json::json!({ "agents": agents }).to_string()).unwrap();
    // Every thread reads, then saves its own entry; each save either lands or is
    // refused as a conflict, never reported saved and then overwritten.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(24));
    let saved: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..24)
            .map(|index| {
                let (path, barrier) = (path.clone(), barrier.clone());
                scope.spawn(move || {
                    let loaded = store::load(&path).unwrap();
                    let agent = format!("a{index}");
                    let edit = Edit::AddTool {
                        target: ToolTarget::Global,
                        tool_agent: agent.clone(),
                        description: "x".into(),
                    };
                    barrier.wait();
                    match apply(&path, &loaded.version, &edit) {
                        Ok(_) => Some(agent),
                        Err(EditError::Config(ConfigError::Conflict { .. })) => None,
                        Err(other) => panic!("{other}"),
                    }
                })
            })
            .collect();
        handles.into_iter().filter_map(|handle| handle.join().unwrap()).collect()
    });
    let mut on_disk: Vec<String> =
        store::load(&path).unwrap().config.agent_tools.iter().map(|entry| entry.agent.clone()).collect();
    on_disk.sort();
    let mut saved = saved;
    saved.sort();
    assert!(!saved.is_empty());
    assert_eq!(on_disk, saved, "every edit reported saved is in the file, and only those");
}

#[cfg(unix)]
#[test]
fn a_save_through_a_symlink_writes_the_target_and_keeps_the_link_and_the_mode() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let folder = tempfile::tempdir().unwrap();
    fs::create_dir(folder.path().join("dotfiles")).unwrap();
    let target = folder.path().join("dotfiles").join("switchboard.json");
    fs::write(&target, WITH_UNKNOWN_FIELDS).unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
    let link = folder.path().join("config.json");
    symlink("dotfiles/switchboard.json", &link).unwrap();
    let loaded = store::load(&link).unwrap();
    let edit = Edit::DisableTool { target: ToolTarget::Global, tool_agent: "aider".into() };
    apply(&link, &loaded.version, &edit).unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    let written: Value = serde_json::from_str(&fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(written["agent_tools"][0]["enabled"], false, "the target holds the edit");
    assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600, "the mode is kept");
    let leftovers: Vec<_> = fs::read_dir(folder.path().join("dotfiles"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The traces form's edit: the section written as given, a field this version
/// does not know kept from the file, a header's value refused when it is not a
/// variable's name (nothing written), and `None` removing the section.
#[test]
fn the_telemetry_section_is_set_keeping_what_it_does_not_know_and_removed() {
    use switchboard_core::config::TelemetryConfig;
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    store::load_or_create(&path).unwrap();
    let mut written: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    written["telemetry"] = serde_json::json!({ "endpoint": "http://127.0.0.1:4318", "sampler": "always" });
    fs::write(&path, serde_json::to_string_pretty(&written).unwrap()).unwrap();
    let loaded = store::load(&path).unwrap();
    let mut section = TelemetryConfig {
        enabled: Some(true),
        endpoint: Some("https://otlp.example.test".into()),
        include_content: Some(false),
        ..TelemetryConfig::default()
    };
    section.headers.insert("authorization".into(), "OTLP_TOKEN".into());
    let set = Edit::SetTelemetry { telemetry: Some(section.clone()) };
    let applied = apply(&path, &loaded.version, &set).unwrap();
    let on_disk: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        on_disk["telemetry"],
        serde_json::json!({
            "enabled": true,
            "endpoint": "https://otlp.example.test",
            "headers": { "authorization": "OTLP_TOKEN" },
            "include_content": false,
            "sampler": "always",
        })
    );
    let mut pasted = section;
    pasted.headers.insert("x-api-key".into(), "sk-live-pasted-value".into());
    let before = fs::read(&path).unwrap();
    let refused = apply(&path, &applied.loaded.version, &Edit::SetTelemetry { telemetry: Some(pasted) });
    let message = format!("{:?}", refused.expect_err("a value is not a variable's name"));
    assert!(message.contains("telemetry.headers.x-api-key") && !message.contains("sk-live-pasted-value"), "{message}");
    assert_eq!(fs::read(&path).unwrap(), before);
    apply(&path, &applied.loaded.version, &Edit::SetTelemetry { telemetry: None }).unwrap();
    let on_disk: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert!(on_disk.get("telemetry").is_none(), "{on_disk}");
}

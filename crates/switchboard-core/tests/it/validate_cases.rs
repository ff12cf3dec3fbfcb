//! Validation and parse errors: every problem at once, each with its JSON path,
//! syntax errors with file, line and column.

use std::path::Path;

use switchboard_core::config::store::{parse, ConfigError};
use switchboard_core::config::{validate, Severity};

/// Parses `text` and returns "severity path" for each problem.
fn problems_of(text: &str) -> Vec<String> {
    let config = parse(Path::new("c.json"), text).expect("parses");
    validate(&config)
        .into_iter()
        .map(|problem| {
            format!("{} {}", if problem.severity == Severity::Error { "error" } else { "warning" }, problem.path)
        })
        .collect()
}

#[test]
fn validation_table() {
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        ("valid demo", r#"{"agents":[{"name":"a","provider":"demo"}]}"#, vec![]),
        (
            "claude-cli can call but is never a target",
            r#"{"agents":[{"name":"claude","provider":"claude-cli","tools":[{"agent":"a","description":"x"}]},{"name":"a","provider":"demo"}],
                "agent_tools":[{"agent":"claude","description":"Claude Code."}]}"#,
            vec!["warning agent_tools[0].agent"],
        ),
        (
            "autonomy is honoured by the coding agents' presets, said to be ignored elsewhere",
            r#"{"agents":[{"name":"a","provider":"aider-cli","autonomy":"full"},{"name":"b","provider":"codex","autonomy":"edit"},
                {"name":"c","provider":"smolagents","model":"m","autonomy":"read_only"},
                {"name":"d","provider":"smolagents","model":"m","autonomy":"full"},
                {"name":"e","provider":"subprocess","command":"x","autonomy":"read_only"}]}"#,
            vec!["warning agents[3].autonomy", "warning agents[4].autonomy"],
        ),
        (
            "agent environment: names and references",
            r#"{"agents":[{"name":"a","provider":"subprocess","command":"x","request_via":"stdin","cwd":"/tmp",
                "env":{"GOOD":"v","FROM_APP":"${HOME}","1BAD":"v","ALSO BAD":"v","REF":"${NOT A NAME}"}}]}"#,
            vec!["error agents[0].env.1BAD", "error agents[0].env.ALSO BAD", "error agents[0].env.REF"],
        ),
        (
            "misspelt fields are warnings at their paths (kept in the file)",
            r#"{"themee":1,"limits":{"max_dept":2},"agents":[{"name":"a","provider":"demo","envv":{"K":"v"},"timeout_sec":30,
                "limits":{"max_step":3},"tools":[{"agent":"b","description":"x","aproval":"auto","limits":{"timeout":1}}]},
                {"name":"b","provider":"demo"}],"agent_tools":[{"agent":"b","description":"y","enable":false}],
                "advisor":{"agent":"b","description":"z","sharecontext":2}}"#,
            vec![
                "warning themee",
                "warning limits.max_dept",
                "warning agent_tools[0].enable",
                "warning advisor.sharecontext",
                "warning agents[0].envv",
                "warning agents[0].timeout_sec",
                "warning agents[0].limits.max_step",
                "warning agents[0].tools[0].aproval",
                "warning agents[0].tools[0].limits.timeout",
            ],
        ),
        (
            "duplicate names and colliding tool names",
            r#"{"agents":[{"name":"a-b","provider":"demo"},{"name":"a_b","provider":"demo"},{"name":"a-b","provider":"demo"}]}"#,
            vec!["error agents[1].name", "error agents[2].name"],
        ),
        (
            "tool name over 64 characters",
            r#"{"agents":[{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","provider":"demo"}]}"#,
            vec!["error agents[0].name"],
        ),
        (
            "a tool name of exactly 64 characters is allowed (agent_ and 58 more)",
            r#"{"agents":[{"name":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","provider":"demo"},
                {"name":"ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc","provider":"demo"}]}"#,
            vec!["error agents[1].name"],
        ),
        (
            "an mcp agent is reached by command or by url, one of them",
            r#"{"agents":[{"name":"neither","provider":"mcp","tool":"t"},
                {"name":"both","provider":"mcp","tool":"t","command":"srv","url":"http://127.0.0.1:1/mcp"},
                {"name":"stdio","provider":"mcp","tool":"t","command":"srv"},
                {"name":"http","provider":"mcp","tool":"t","url":"http://127.0.0.1:1/mcp"}]}"#,
            vec!["error agents[0].provider", "error agents[1].provider"],
        ),
        (
            "api_key_env names a variable: capitals, digits and underscores, not starting with a digit",
            r#"{"agents":[{"name":"a","provider":"openai","url":"http://x","model":"m","api_key_env":"OPENAI_API_KEY"},
                {"name":"b","provider":"openai","url":"http://x","model":"m","api_key_env":"KEY_2"},
                {"name":"c","provider":"openai","url":"http://x","model":"m","api_key_env":""},
                {"name":"d","provider":"openai","url":"http://x","model":"m","api_key_env":"2KEY"},
                {"name":"e","provider":"openai","url":"http://x","model":"m","api_key_env":"lower_key"}]}"#,
            vec!["error agents[2].api_key_env", "error agents[3].api_key_env", "error agents[4].api_key_env"],
        ),
        (
            "api_key_keyring names an entry, on an HTTP model agent, never beside api_key_env",
            r#"{"agents":[{"name":"a","provider":"openai","url":"http://x","model":"m","api_key_keyring":"a"},
                {"name":"b","provider":"openai","url":"http://x","model":"m","api_key_keyring":"open-router.main_2"},
                {"name":"c","provider":"openai","url":"http://x","model":"m","api_key_keyring":"sk-or-v1 pasted key"},
                {"name":"d","provider":"openai","url":"http://x","model":"m","api_key_keyring":"d","api_key_env":"D_KEY"},
                {"name":"e","provider":"a2a","url":"http://x","api_key_keyring":"e"},
                {"name":"f","provider":"openai","url":"http://x","model":"m","api_key_keyring":""}]}"#,
            vec![
                "error agents[2].api_key_keyring",
                "error agents[3].api_key_keyring",
                "error agents[4].api_key_keyring",
                "error agents[5].api_key_keyring",
            ],
        ),
        (
            "duplicate entries within one scope, unknown agent warning",
            r#"{"agents":[{"name":"a","provider":"demo","tools":[{"agent":"b","description":"x"},{"agent":"b","description":"y"}]},{"name":"b","provider":"demo"}],
                "agent_tools":[{"agent":"ghost","description":"g"}]}"#,
            vec!["error agents[0].tools[1].agent", "warning agent_tools[0].agent"],
        ),
        (
            "an entry served to MCP clients under a bad name, a bad schema, or a name taken",
            r#"{"agents":[{"name":"a","provider":"demo"},{"name":"b","provider":"demo"},{"name":"c","provider":"demo"}],
                "agent_tools":[{"agent":"a","description":"x","serve":{"name":"has space","arguments":{"type":"string"}}},
                               {"agent":"b","description":"y","serve":{"name":"agent_c","task":"required"}},
                               {"agent":"c","description":"z"}]}"#,
            vec![
                "error agent_tools[0].serve.name",
                "error agent_tools[0].serve.arguments",
                "error agent_tools[2].serve.name",
            ],
        ),
        (
            "an agent's own entry served under a name a global entry has",
            r#"{"agents":[{"name":"main","provider":"demo","tools":[{"agent":"c","description":"mine"}]},
                          {"name":"b","provider":"demo"},{"name":"c","provider":"demo"}],
                "agent_tools":[{"agent":"b","description":"y","serve":{"name":"agent_c"}}]}"#,
            vec!["error agents[0].tools[0].serve.name"],
        ),
        (
            "a name clash that no list offers is none (a disabled entry, the agent itself)",
            r#"{"agents":[{"name":"main","provider":"demo","tools":[{"agent":"c","description":"mine","enabled":false}]},
                          {"name":"b","provider":"demo","tools":[{"agent":"c","description":"b's"}]},
                          {"name":"c","provider":"demo"}],
                "agent_tools":[{"agent":"b","description":"y","serve":{"name":"agent_c"}}]}"#,
            vec![],
        ),
        (
            "the same agent in both scopes is an override, not a duplicate",
            r#"{"agents":[{"name":"a","provider":"demo","tools":[{"agent":"b","description":"x"}]},{"name":"b","provider":"demo"}],
                "agent_tools":[{"agent":"b","description":"g"}]}"#,
            vec![],
        ),
        (
            "provider fields, roles, limits, empty description",
            r#"{"primary":"nobody","escalation":"x","limits":{"max_parallel":0},
                "agents":[{"name":"x","provider":"local"},{"name":"y","provider":"subprocess","timeout_secs":0},
                          {"name":"z","provider":"openai","url":"ftp://h","api_key_env":"sk-abc123"}],
                "agent_tools":[{"agent":"x","description":"  "}]}"#,
            vec![
                "error agents[0].url",
                "error agents[1].command",
                "error agents[1].timeout_secs",
                "error agents[2].url",
                "error agents[2].api_key_env",
                "error agent_tools[0].description",
                "error primary",
                "error limits.max_parallel",
            ],
        ),
    ];
    for (name, text, expected) in cases {
        assert_eq!(problems_of(text), expected, "case: {name}");
    }
}

#[test]
fn a_pasted_key_is_never_echoed() {
    let text = r#"{"agents":[{"name":"z","provider":"local","url":"http://h","api_key_env":"sk-secret-123"}]}"#;
    let config = parse(Path::new("c.json"), text).unwrap();
    let rendered: Vec<String> = validate(&config).iter().map(ToString::to_string).collect();
    assert!(!rendered.is_empty());
    assert!(rendered.iter().all(|line| !line.contains("sk-secret-123")), "{rendered:?}");
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let text = "{\n  \"agents\": [\n    {\"name\": \"a\" \"provider\": \"demo\"}\n  ]\n}\n";
    match parse(Path::new("/tmp/x/config.json"), text) {
        Err(ConfigError::Syntax { path, line, column, .. }) => {
            assert_eq!(path, Path::new("/tmp/x/config.json"));
            assert_eq!((line, column), (3, 18));
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    let error = parse(Path::new("c.json"), "{\"agents\": [").unwrap_err();
    assert!(error.to_string().starts_with("c.json:1:"), "{error}");
}

#[test]
fn type_errors_name_the_json_path() {
    let text = r#"{"agents":[{"name":"a","provider":"demo"},{"name":"b","provider":"demo","tools":[{"agent":7,"description":"d"}]}]}"#;
    match parse(Path::new("c.json"), text) {
        Err(ConfigError::Type { json_path, .. }) => assert_eq!(json_path, "agents[1].tools[0].agent"),
        other => panic!("expected a type error, got {other:?}"),
    }
    let unknown_provider = r#"{"agents":[{"name":"a","provider":"telepathy"}]}"#;
    let error = parse(Path::new("c.json"), unknown_provider).unwrap_err();
    assert!(error.to_string().contains("agents[0].provider"), "{error}");
    assert!(error.to_string().contains("telepathy"), "{error}");
}

/// A problem reads as the CLI's `check` prints it: severity, JSON path, message.
#[test]
fn a_problem_reads_as_severity_path_and_message() {
    let config = parse(Path::new("c.json"), r#"{"themee":1,"agents":[{"name":"","provider":"demo"}]}"#).unwrap();
    let shown: Vec<String> = validate(&config).iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "error: agents[0].name: an agent needs a non-empty name",
            "warning: themee: unknown field `themee`: it does nothing (it is kept in the file); check its spelling",
        ],
    );
}

#[test]
fn every_wrong_type_is_reported_at_once_not_only_the_first() {
    let text = r#"{"agent_tools":[{"agent":"a","description":"d"},{"agent":"a","description":7}],
        "agents":[{"name":"a","provider":"demo"},{"name":"b","provider":"demo","tools":[{"agent":"a","description":"d","enabled":"yes"}]}],
        "limits":{"max_depth":"deep"}}"#;
    let error = parse(Path::new("c.json"), text).unwrap_err();
    let Err(ConfigError::Type { json_path, message, .. }) = parse(Path::new("c.json"), text) else {
        panic!("expected a type error, got {error:?}")
    };
    assert_eq!(json_path, "agent_tools[1].description", "the first in the file is the one with a position");
    for other in ["agents[1].tools[0].enabled", "limits.max_depth"] {
        assert!(message.contains(other), "{other} is not reported: {message}");
    }
    assert!(message.contains("and 2 more"), "{message}");
}

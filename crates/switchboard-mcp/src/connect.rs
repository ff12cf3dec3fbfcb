//! What each MCP client needs in its own config to use this server: Claude Code's
//! `.mcp.json` (or `claude mcp add`), Codex's `[mcp_servers.switchboard]` in
//! `config.toml` (with the approval mode it needs to call at all), Gemini CLI's
//! and Qwen Code's `mcpServers` in `settings.json`; over stdio (this program, run
//! as `switchboard mcp`) or over the streamable HTTP endpoint. The entry as text to
//! print, and a client's file with the entry set, everything else in it kept
//! (`switchboard mcp connect --write`). Pure: the caller reads and writes files.

use serde_json::{json, Map, Value};

/// The server's name in every client's config (its tools are
/// `mcp__switchboard__agent_<name>` in Claude Code, Codex and Qwen Code,
/// `mcp_switchboard_agent_<name>` in Gemini CLI).
pub const SERVER_NAME: &str = "switchboard";

/// The MCP clients `connect` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpClient {
    ClaudeCode,
    Codex,
    Gemini,
    Qwen,
}

/// How the client reaches the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Launch {
    /// The client starts `command args…` and speaks MCP on its stdio.
    Stdio { command: String, args: Vec<String> },
    /// The client connects to a running streamable HTTP endpoint, with a bearer
    /// token from `token_env` when the endpoint requires one.
    Http { url: String, token_env: Option<String> },
}

/// One client's setup, to show.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientSetup {
    /// The file the entry goes in, as the client's docs name it.
    pub file: &'static str,
    /// The entry as it appears in that file.
    pub entry: String,
    /// A command of the client's own that adds the same entry, where it has one.
    pub command: Option<String>,
    /// What the client does with results and approvals, in a sentence or two.
    pub notes: &'static str,
}

impl McpClient {
    /// Every client, in the order they are shown.
    pub const ALL: [McpClient; 4] = [McpClient::ClaudeCode, McpClient::Codex, McpClient::Gemini, McpClient::Qwen];

    /// Its name on the command line (`switchboard mcp connect NAME`).
    pub fn name(self) -> &'static str {
        match self {
            McpClient::ClaudeCode => "claude-code",
            McpClient::Codex => "codex",
            McpClient::Gemini => "gemini",
            McpClient::Qwen => "qwen",
        }
    }

    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            McpClient::ClaudeCode => "Claude Code",
            McpClient::Codex => "Codex",
            McpClient::Gemini => "Gemini CLI",
            McpClient::Qwen => "Qwen Code",
        }
    }

    /// From its name on the command line (or its program's, or its provider's).
    pub fn parse(name: &str) -> Option<McpClient> {
        let alias = match name {
            "claude" => "claude-code",
            "gemini-cli" => "gemini",
            "qwen-code" => "qwen",
            other => other,
        };
        McpClient::ALL.into_iter().find(|client| client.name() == alias)
    }

    /// The file the entry goes in: relative to the project folder for Claude Code,
    /// to the home folder for the others (Codex: `$CODEX_HOME` when set).
    pub fn file(self) -> &'static str {
        match self {
            McpClient::ClaudeCode => ".mcp.json",
            McpClient::Codex => ".codex/config.toml",
            McpClient::Gemini => ".gemini/settings.json",
            McpClient::Qwen => ".qwen/settings.json",
        }
    }

    /// Whether the file is in the project folder (else in the home folder).
    pub fn in_project(self) -> bool {
        self == McpClient::ClaudeCode
    }

    fn notes(self) -> &'static str {
        match self {
            McpClient::ClaudeCode => {
                "Claude Code gives its model the structured result, whose `result` holds the answer. `claude -p` cannot \
                 show approval requests and declines them: run `switchboard mcp --approve all`, or set the entries it \
                 calls to approval auto; interactive Claude Code shows them."
            }
            McpClient::Codex => {
                "Codex gives its model the structured result, whose `result` holds the answer. It calls MCP tools only \
                 with `default_tools_approval_mode = \"approve\"`; Switchboard's own approvals still apply, and \
                 `codex exec` cannot show them: use `--approve all` or entries with approval auto."
            }
            McpClient::Gemini => {
                "Gemini CLI gives its model the text result (the fenced answer). `trust` lets it call the tools without \
                 its own confirmation, which non-interactive runs cannot give; Switchboard's approvals still apply."
            }
            McpClient::Qwen => {
                "Qwen Code gives its model the text result (the fenced answer). `trust` lets it call the tools without \
                 its own confirmation, which non-interactive runs cannot give; Switchboard's approvals still apply."
            }
        }
    }
}

/// The entry `client` needs for `launch`, to print.
pub fn setup(client: McpClient, launch: &Launch) -> ClientSetup {
    let entry = match client {
        McpClient::Codex => merged(client, None, launch).expect("a new file merges"),
        _ => {
            let mut servers = Map::new();
            servers.insert(SERVER_NAME.into(), json_entry(client, launch));
            serde_json::to_string_pretty(&json!({ "mcpServers": servers })).expect("JSON serializes")
        }
    };
    let command = (client == McpClient::ClaudeCode).then(|| match launch {
        Launch::Stdio { command, args } => {
            let words: Vec<String> = std::iter::once(command).chain(args).map(|word| shell_word(word)).collect();
            format!("claude mcp add {SERVER_NAME} -- {}", words.join(" "))
        }
        Launch::Http { url, token_env } => {
            let header = token_env
                .as_ref()
                .map(|name| format!(" --header \"Authorization: Bearer ${{{name}}}\""))
                .unwrap_or_default();
            format!("claude mcp add --transport http{header} {SERVER_NAME} {}", shell_word(url))
        }
    });
    ClientSetup { file: client.file(), entry, command, notes: client.notes() }
}

/// `existing` (the client's file, or nothing when there is none) with this
/// server's entry set and everything else kept; an error when the file is not
/// what the client reads (invalid JSON or TOML), which is then left alone.
pub fn merged(client: McpClient, existing: Option<&str>, launch: &Launch) -> Result<String, String> {
    let existing = existing.filter(|text| !text.trim().is_empty());
    if client == McpClient::Codex {
        let mut document: toml_edit::DocumentMut = match existing {
            Some(text) => text.parse().map_err(|error| format!("not valid TOML: {error}"))?,
            None => toml_edit::DocumentMut::new(),
        };
        let servers = document
            .entry("mcp_servers")
            .or_insert_with(|| {
                let mut table = toml_edit::Table::new();
                table.set_implicit(true);
                toml_edit::Item::Table(table)
            })
            .as_table_mut()
            .ok_or("`mcp_servers` is not a table")?;
        servers.insert(SERVER_NAME, toml_edit::Item::Table(codex_table(launch)));
        return Ok(document.to_string());
    }
    let mut document: Value = match existing {
        Some(text) => serde_json::from_str(text).map_err(|error| format!("not valid JSON: {error}"))?,
        None => json!({}),
    };
    let object = document.as_object_mut().ok_or("the file is not a JSON object")?;
    let servers = object.entry("mcpServers").or_insert_with(|| json!({}));
    let servers = servers.as_object_mut().ok_or("`mcpServers` is not an object")?;
    servers.insert(SERVER_NAME.into(), json_entry(client, launch));
    Ok(serde_json::to_string_pretty(&document).expect("JSON serializes") + "\n")
}

/// The `mcpServers` entry of Claude Code, Gemini CLI and Qwen Code.
fn json_entry(client: McpClient, launch: &Launch) -> Value {
    let mut entry = match (client, launch) {
        (McpClient::ClaudeCode, Launch::Stdio { command, args }) => {
            json!({ "type": "stdio", "command": command, "args": args })
        }
        (McpClient::ClaudeCode, Launch::Http { url, .. }) => json!({ "type": "http", "url": url }),
        (_, Launch::Stdio { command, args }) => json!({ "command": command, "args": args }),
        // Gemini and Qwen name streamable HTTP `httpUrl` (`url` is the old SSE transport).
        (_, Launch::Http { url, .. }) => json!({ "httpUrl": url }),
    };
    if let Launch::Http { token_env: Some(name), .. } = launch {
        // Each expands `${NAME}` from its environment: the token never sits in the file.
        entry["headers"] = json!({ "Authorization": format!("Bearer ${{{name}}}") });
    }
    if matches!(client, McpClient::Gemini | McpClient::Qwen) {
        entry["trust"] = json!(true);
    }
    entry
}

/// Codex's `[mcp_servers.switchboard]`.
fn codex_table(launch: &Launch) -> toml_edit::Table {
    let mut table = toml_edit::Table::new();
    match launch {
        Launch::Stdio { command, args } => {
            table.insert("command", toml_edit::value(command.as_str()));
            let mut list = toml_edit::Array::new();
            for argument in args {
                list.push(argument.as_str());
            }
            table.insert("args", toml_edit::value(list));
        }
        Launch::Http { url, token_env } => {
            table.insert("url", toml_edit::value(url.as_str()));
            if let Some(name) = token_env {
                table.insert("bearer_token_env_var", toml_edit::value(name.as_str()));
            }
        }
    }
    table.insert("default_tools_approval_mode", toml_edit::value("approve"));
    table
}

/// `word` quoted for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|character| character.is_ascii_alphanumeric() || "-_./:=@%+,".contains(character));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> Launch {
        Launch::Stdio {
            command: "/usr/bin/switchboard".into(),
            args: vec!["--config".into(), "/home/me/my config.json".into(), "mcp".into()],
        }
    }

    fn http() -> Launch {
        Launch::Http { url: "http://127.0.0.1:8765/mcp".into(), token_env: Some("SB_TOKEN".into()) }
    }

    #[test]
    fn clients_are_named_by_their_names_and_aliases() {
        for client in McpClient::ALL {
            assert_eq!(McpClient::parse(client.name()), Some(client));
        }
        assert_eq!(McpClient::parse("claude"), Some(McpClient::ClaudeCode));
        assert_eq!(McpClient::parse("qwen-code"), Some(McpClient::Qwen));
        assert_eq!(McpClient::parse("cursor"), None);
    }

    #[test]
    fn each_client_gets_its_own_entry() {
        let claude = setup(McpClient::ClaudeCode, &stdio());
        let entry: Value = serde_json::from_str(&claude.entry).unwrap();
        assert_eq!(entry["mcpServers"]["switchboard"]["command"], "/usr/bin/switchboard");
        assert_eq!(
            claude.command.as_deref(),
            Some("claude mcp add switchboard -- /usr/bin/switchboard --config '/home/me/my config.json' mcp")
        );
        let claude_http = setup(McpClient::ClaudeCode, &http());
        let entry: Value = serde_json::from_str(&claude_http.entry).unwrap();
        assert_eq!(entry["mcpServers"]["switchboard"]["type"], "http");
        assert_eq!(entry["mcpServers"]["switchboard"]["headers"]["Authorization"], "Bearer ${SB_TOKEN}");

        let codex = setup(McpClient::Codex, &stdio());
        let table: toml_edit::DocumentMut = codex.entry.parse().unwrap();
        assert_eq!(table["mcp_servers"]["switchboard"]["default_tools_approval_mode"].as_str(), Some("approve"));
        assert_eq!(table["mcp_servers"]["switchboard"]["args"][1].as_str(), Some("/home/me/my config.json"));
        let codex_http = setup(McpClient::Codex, &http()).entry;
        assert!(codex_http.contains("bearer_token_env_var = \"SB_TOKEN\""), "{codex_http}");

        for client in [McpClient::Gemini, McpClient::Qwen] {
            let entry: Value = serde_json::from_str(&setup(client, &http()).entry).unwrap();
            assert_eq!(entry["mcpServers"]["switchboard"]["httpUrl"], "http://127.0.0.1:8765/mcp");
            assert_eq!(entry["mcpServers"]["switchboard"]["trust"], true);
        }
    }

    #[test]
    fn merging_keeps_the_rest_of_the_file_and_is_idempotent() {
        let settings = r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}}"#;
        let once = merged(McpClient::Gemini, Some(settings), &stdio()).unwrap();
        let twice = merged(McpClient::Gemini, Some(&once), &stdio()).unwrap();
        assert_eq!(once, twice, "idempotent");
        let value: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(value["theme"], "dark");
        assert_eq!(value["mcpServers"]["other"]["command"], "x");
        assert_eq!(value["mcpServers"]["switchboard"]["args"][2], "mcp");

        let config = "# mine\nmodel = \"gpt-5.5\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let once = merged(McpClient::Codex, Some(config), &stdio()).unwrap();
        assert!(once.starts_with("# mine\nmodel = \"gpt-5.5\""), "comments and order kept: {once}");
        assert!(once.contains("[mcp_servers.other]") && once.contains("[mcp_servers.switchboard]"), "{once}");
        assert_eq!(merged(McpClient::Codex, Some(&once), &stdio()).unwrap(), once, "idempotent");
        assert!(merged(McpClient::Codex, None, &http()).unwrap().contains("url = \"http://127.0.0.1:8765/mcp\""));

        assert!(merged(McpClient::Qwen, Some("{ not json"), &stdio()).unwrap_err().contains("not valid JSON"));
        assert!(merged(McpClient::Codex, Some("= broken"), &stdio()).unwrap_err().contains("not valid TOML"));
    }
}

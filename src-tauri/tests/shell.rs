//! The shell on Tauri's mock runtime: the committed TypeScript bindings match the
//! Rust types, and the commands answer through real IPC on a mock window.

use std::path::Path;

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindowBuilder;

#[test]
fn committed_bindings_match_the_rust_types() {
    let committed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
    let generated_dir = tempfile::tempdir().unwrap();
    let generated_path = generated_dir.path().join("bindings.ts");
    switchboard_app::export_bindings(&generated_path).expect("bindings export");
    let generated = std::fs::read_to_string(&generated_path).unwrap();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&committed_path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == generated,
        "ui/src/bindings.ts differs from what the Rust types generate; run `make bindings` and commit the file"
    );
}

/// The app on Tauri's mock runtime with its main window: one turn of the event
/// loop runs the setup closure, which manages the state (deprecated only because
/// calling it in a loop busy-waits; once is what is needed).
fn start_app(
    config_path: &Path,
    data_dir: std::path::PathBuf,
) -> (tauri::App<tauri::test::MockRuntime>, tauri::WebviewWindow<tauri::test::MockRuntime>) {
    let mut app = switchboard_app::configure(mock_builder(), config_path.to_path_buf(), Some(data_dir))
        .build(mock_context(noop_assets()))
        .expect("the app starts");
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, webview)
}

fn invoke(
    webview: &tauri::WebviewWindow<tauri::test::MockRuntime>,
    command: &str,
    body: Value,
) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: command.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|response| response.deserialize::<Value>().unwrap())
}

#[test]
fn commands_answer_on_the_mock_runtime() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("config.json");
    demo_config(&config_path);
    let (_app, webview) = start_app(&config_path, folder.path().join("data"));

    let state = invoke(&webview, "get_config_state", json!({})).expect("get_config_state answers");
    assert_eq!(state["path"], json!(config_path.display().to_string()));
    assert_eq!(state["config"]["primary"], "assistant");
    assert!(state["error"].is_null());

    let tools = invoke(&webview, "list_tools", json!({ "agent": "assistant" })).expect("list_tools answers");
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|tool| tool["tool_name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["agent_researcher", "agent_summariser"]);

    let cancelled = invoke(&webview, "cancel_turn", json!({ "turnId": "no-such-turn" })).expect("cancel_turn answers");
    assert_eq!(cancelled, json!(false));
}

/// Writes the demo config at `path`, as a first start does at the default location.
fn demo_config(path: &Path) {
    switchboard_core::config::store::load_or_create(path).expect("the demo config is written");
}

#[test]
fn a_named_config_that_does_not_exist_is_an_error_and_nothing_is_created() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("mistyped").join("config.json");
    let (_app, webview) = start_app(&config_path, folder.path().join("data"));
    let state = invoke(&webview, "get_config_state", json!({})).expect("get_config_state answers");
    assert_eq!(state["error"]["kind"], "io", "{state}");
    assert!(state["error"]["message"].as_str().unwrap().contains("mistyped/config.json"), "{state}");
    assert!(!folder.path().join("mistyped").exists(), "nothing was created");
}

#[test]
fn a_broken_config_keeps_the_app_up_and_the_file_untouched() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("config.json");
    std::fs::write(&config_path, "{ \"agents\": [ oops ] }").unwrap();
    let (_app, webview) = start_app(&config_path, folder.path().join("data"));
    let state = invoke(&webview, "get_config_state", json!({})).expect("get_config_state answers");
    assert_eq!(state["error"]["kind"], "config_syntax");
    assert_eq!(state["error"]["line"], 1);
    assert_eq!(std::fs::read_to_string(&config_path).unwrap(), "{ \"agents\": [ oops ] }");
}

#[test]
fn sessions_are_created_listed_renamed_loaded_and_deleted() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("config.json");
    demo_config(&config_path);
    let (_app, webview) = start_app(&config_path, folder.path().join("data"));
    let created = invoke(&webview, "create_session", json!({ "title": "Planning" })).expect("create_session answers");
    let id = created["id"].as_str().unwrap().to_string();
    invoke(&webview, "rename_session", json!({ "id": id, "title": "Planning, renamed" })).expect("rename answers");
    let listed = invoke(&webview, "list_sessions", json!({})).expect("list answers");
    assert_eq!(listed[0]["title"], "Planning, renamed");
    let log = invoke(&webview, "load_session", json!({ "id": id })).expect("load answers");
    let kinds: Vec<&str> =
        log["records"].as_array().unwrap().iter().map(|record| record["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["created", "renamed"]);
    assert!(
        folder.path().join("data/sessions").join(format!("{id}.jsonl")).exists(),
        "logs live in the app data folder"
    );
    let missing = invoke(&webview, "export_turn", json!({ "sessionId": id, "turnId": "nope" })).unwrap_err();
    assert_eq!(missing["kind"], "not_found");
    invoke(&webview, "delete_session", json!({ "id": id })).expect("delete answers");
    assert_eq!(invoke(&webview, "list_sessions", json!({})).unwrap(), json!([]));
    let bad = invoke(&webview, "load_session", json!({ "id": "../../etc/passwd" })).unwrap_err();
    assert_eq!(bad["kind"], "not_found");
}

/// Waits until `condition` holds for the config state, polling the command.
fn wait_for_state(
    webview: &tauri::WebviewWindow<tauri::test::MockRuntime>,
    condition: impl Fn(&Value) -> bool,
) -> Value {
    // Generous: a reload is a file event away, and a loaded machine can be slow.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let state = invoke(webview, "get_config_state", json!({})).expect("get_config_state answers");
        if condition(&state) {
            return state;
        }
        assert!(std::time::Instant::now() < deadline, "the config state never became what was expected: {state}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_broken_edit_while_the_app_runs_keeps_the_last_good_config_until_fixed() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("config.json");
    demo_config(&config_path);
    let (_app, webview) = start_app(&config_path, folder.path().join("data"));
    let first = wait_for_state(&webview, |state| state["config"]["primary"] == "assistant");
    let good = std::fs::read_to_string(&config_path).unwrap();

    std::fs::write(&config_path, "{ \"agents\": [ }").unwrap();
    let broken = wait_for_state(&webview, |state| !state["error"].is_null());
    assert_eq!(broken["error"]["kind"], "config_syntax");
    assert_eq!(broken["config"], first["config"], "the last good config stays in force");

    std::fs::write(&config_path, good.replace("\"primary\": \"assistant\"", "\"primary\": \"researcher\"")).unwrap();
    let fixed =
        wait_for_state(&webview, |state| state["error"].is_null() && state["config"]["primary"] == "researcher");
    assert_ne!(fixed["version"], first["version"]);
}

#[test]
fn preferences_are_kept_by_rust_in_the_data_folder() {
    let folder = tempfile::tempdir().unwrap();
    let data = folder.path().join("data");
    let (_app, webview) = start_app(&folder.path().join("config.json"), data.clone());
    assert_eq!(invoke(&webview, "get_preferences", json!({})).unwrap(), json!({}));
    invoke(&webview, "set_preferences", json!({ "change": { "theme": "dark" } })).unwrap();
    let both = invoke(&webview, "set_preferences", json!({ "change": { "rightWidth": 420 } })).unwrap();
    assert_eq!(both, json!({ "theme": "dark", "rightWidth": 420 }), "a change keeps what it does not name");
    let on_disk: Value = serde_json::from_slice(&std::fs::read(data.join("prefs.json")).unwrap()).unwrap();
    assert_eq!(on_disk, both);
    let back = invoke(&webview, "set_preferences", json!({ "change": { "theme": "system" } })).unwrap();
    assert_eq!(back["theme"], "system", "a pick can go back to following the system");
    let refused = invoke(&webview, "set_preferences", json!({ "change": { "theme": "neon" } }));
    assert!(refused.is_err(), "only known themes: {refused:?}");
    std::fs::write(data.join("prefs.json"), "{ torn").unwrap();
    assert_eq!(invoke(&webview, "get_preferences", json!({})).unwrap(), json!({}), "a damaged file reads as defaults");
}

/// The window's capability grants exactly the app commands the UI calls, and of
/// the plugins' permissions only event listening, its own title and notifications:
/// no store, file, opener or window-geometry access.
#[test]
fn the_window_may_call_only_what_the_ui_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let capability: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("capabilities/default.json")).unwrap()).unwrap();
    let granted: Vec<&str> =
        capability["permissions"].as_array().unwrap().iter().map(|value| value.as_str().unwrap()).collect();
    let plugins: Vec<&&str> = granted.iter().filter(|permission| permission.contains(':')).collect();
    // Event listening (config changes, MCP calls); the window's own title (the count of
    // waiting calls); notifications: the plugin's script asks whether they are allowed
    // when the page loads, the UI shows one when a call starts waiting in the background
    // and listens for its click. Not the plugin's default set (no channels, no
    // removing, no pending list), and no window focus or geometry: Rust raises the
    // window on a click and keeps its size and place.
    assert_eq!(
        plugins,
        vec![
            &"core:event:allow-listen",
            &"core:event:allow-unlisten",
            &"core:window:allow-set-title",
            &"notification:allow-is-permission-granted",
            &"notification:allow-notify",
            &"notification:allow-register-listener",
        ]
    );
    let mut ui_source = String::new();
    let mut folders = vec![root.join("../ui/src")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap().map(Result::unwrap) {
            let path = entry.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                folders.push(path);
            } else if (name.ends_with(".ts") || name.ends_with(".svelte"))
                && name != "bindings.ts"
                && !name.contains(".test.")
            {
                ui_source.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut used = Vec::new();
    for (index, _) in ui_source.match_indices("commands.") {
        let name: String = ui_source[index + "commands.".len()..]
            .chars()
            .take_while(|character| character.is_alphanumeric())
            .collect();
        // camelCase in TypeScript, allow-kebab-case in the capability.
        let kebab: String = name
            .chars()
            .map(|character| {
                if character.is_uppercase() {
                    format!("-{}", character.to_ascii_lowercase())
                } else {
                    character.to_string()
                }
            })
            .collect();
        used.push(format!("allow-{kebab}"));
    }
    used.sort();
    used.dedup();
    let mut app_granted: Vec<String> = granted
        .iter()
        .filter(|permission| !permission.contains(':'))
        .map(|permission| permission.to_string())
        .collect();
    app_granted.sort();
    assert_eq!(app_granted, used, "the capability and the UI's command calls differ");
}

/// The built-in MCP endpoint: off until switched on, then on loopback with a
/// client config naming its address; a taken port is an error in words, not a
/// crash; switched off, the port closes; the switch is remembered.
#[test]
fn the_built_in_mcp_endpoint_switches_on_and_off_and_is_remembered() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("config.json");
    demo_config(&config_path);
    let data = folder.path().join("data");
    let (_app, webview) = start_app(&config_path, data.clone());
    let off = invoke(&webview, "get_mcp_server", json!({})).unwrap();
    assert_eq!(off["running"], json!(false));

    let on = invoke(&webview, "set_mcp_server", json!({ "enabled": true, "port": 0 })).unwrap();
    assert_eq!(on["running"], json!(true), "{on}");
    let url = on["url"].as_str().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let snippet: Value = serde_json::from_str(on["client_config"].as_str().unwrap()).unwrap();
    assert_eq!(snippet["mcpServers"]["switchboard"]["url"], json!(url));
    // Each client's own config for the endpoint, Codex's with the approval mode it needs.
    let clients: Vec<&str> =
        on["clients"].as_array().unwrap().iter().map(|setup| setup["client"].as_str().unwrap()).collect();
    assert_eq!(clients, ["claude-code", "codex", "gemini", "qwen"]);
    let codex = &on["clients"][1];
    assert_eq!(codex["file"], json!("~/.codex/config.toml"));
    assert!(codex["entry"].as_str().unwrap().contains(&format!("url = \"{url}\"")), "{codex}");
    assert!(codex["entry"].as_str().unwrap().contains("default_tools_approval_mode = \"approve\""), "{codex}");
    assert_eq!(on["clients"][2]["entry"].as_str().map(|entry| entry.contains("httpUrl")), Some(true));
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    // A bearer token, shown in the answer that made it and never again; the
    // clients' configs name the variable it is read from, never the token.
    let token = on["token"].as_str().expect("the new token is shown once").to_string();
    assert!(token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()), "{token}");
    assert_eq!(on["token_env"], json!("SWITCHBOARD_MCP_TOKEN"));
    assert!(!on.to_string().replace(&format!("\"token\":\"{token}\""), "").contains(&token), "only in `token`");
    assert!(codex["entry"].as_str().unwrap().contains("bearer_token_env_var = \"SWITCHBOARD_MCP_TOKEN\""));
    assert_eq!(initialize(&address, None), 401, "a call without the token is refused");
    assert_eq!(initialize(&address, Some("not-the-token-at-all")), 401);
    assert_eq!(initialize(&address, Some(&token)), 200);
    let again = invoke(&webview, "get_mcp_server", json!({})).unwrap();
    assert_eq!((&again["url"], &again["token"]), (&json!(url), &Value::Null), "the token is shown once");

    // A rotation: the old token stops working, the new one is shown once.
    let rotated = invoke(&webview, "rotate_mcp_token", json!({})).unwrap();
    let new_token = rotated["token"].as_str().unwrap().to_string();
    assert_ne!(new_token, token);
    assert_eq!(rotated["url"], json!(url), "the same port");
    assert_eq!(initialize(&address, Some(&token)), 401);
    assert_eq!(initialize(&address, Some(&new_token)), 200);
    let prefs: Value = serde_json::from_slice(&std::fs::read(data.join("prefs.json")).unwrap()).unwrap();
    assert_eq!(prefs["mcpServer"], json!(true));

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let refused = invoke(&webview, "set_mcp_server", json!({ "enabled": true, "port": port })).unwrap();
    assert_eq!(refused["running"], json!(false));
    assert!(refused["error"].as_str().unwrap().contains("cannot listen on 127.0.0.1:"), "{refused}");

    let switched_off = invoke(&webview, "set_mcp_server", json!({ "enabled": false, "port": null })).unwrap();
    assert_eq!(switched_off["running"], json!(false));
    // The switch answers once the accept loop has ended: the port refuses at once.
    assert!(std::net::TcpStream::connect(&address).is_err(), "the endpoint still listens after it was switched off");
    let prefs: Value = serde_json::from_slice(&std::fs::read(data.join("prefs.json")).unwrap()).unwrap();
    assert_eq!(prefs["mcpServer"], json!(false));
}

/// The HTTP status of an MCP `initialize` POSTed to the endpoint at `address`.
fn initialize(address: &str, token: Option<&str>) -> u16 {
    use std::io::{Read, Write};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;
    let authorization = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{authorization}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

/// The forms' edits go through the core: applied and on disk at once, refused in
/// words when they break a rule, and refused with nothing written when the file
/// changed since the version the form was made against; the explanation of an
/// agent's list follows the edit.
#[test]
fn edits_are_written_refused_in_words_and_conflict_checked() {
    let folder = tempfile::tempdir().unwrap();
    let config_path = folder.path().join("config.json");
    demo_config(&config_path);
    let (_app, webview) = start_app(&config_path, folder.path().join("data"));
    let state = invoke(&webview, "get_config_state", json!({})).unwrap();
    assert_eq!(state["first_start"], json!(false), "a config that existed is not a first start");
    let version = state["version"].as_str().unwrap().to_string();

    let disable = json!({ "op": "disable_tool", "target": { "kind": "global" }, "tool_agent": "researcher" });
    let edited = invoke(&webview, "edit_config", json!({ "expectedVersion": version, "edit": disable })).unwrap();
    assert_ne!(edited["version"], json!(version));
    assert_eq!(edited["config"]["agent_tools"][0]["enabled"], json!(false));
    let on_disk: Value = serde_json::from_slice(&std::fs::read(&config_path).unwrap()).unwrap();
    assert_eq!(on_disk["agent_tools"][0]["enabled"], json!(false));
    let explained = invoke(&webview, "explain_tools", json!({ "agent": "assistant" })).unwrap();
    let researcher = explained["entries"].as_array().unwrap().iter().find(|entry| entry["tool_agent"] == "researcher");
    assert_eq!(researcher.unwrap()["absent"], json!("disabled"));

    // Made against the version before the last edit: a conflict, and nothing written.
    let before = std::fs::read(&config_path).unwrap();
    let enable = json!({ "op": "enable_tool", "target": { "kind": "global" }, "tool_agent": "researcher" });
    let stale = invoke(&webview, "edit_config", json!({ "expectedVersion": version, "edit": enable })).unwrap_err();
    assert_eq!(stale["kind"], json!("config_conflict"));
    assert_eq!(std::fs::read(&config_path).unwrap(), before);
    let theirs = invoke(&webview, "read_config_file", json!({})).unwrap();
    assert_eq!(theirs["version"], edited["version"]);

    let remove_primary = json!({ "op": "remove_agent", "name": "assistant", "tool_entries": "remove" });
    let refused =
        invoke(&webview, "edit_config", json!({ "expectedVersion": theirs["version"], "edit": remove_primary }))
            .unwrap_err();
    assert_eq!(refused["kind"], json!("edit_refused"));
    assert!(refused["message"].as_str().unwrap().contains("is the primary agent"), "{refused}");
    assert_eq!(std::fs::read(&config_path).unwrap(), before);

    let missing = invoke(&webview, "explain_tools", json!({ "agent": "nobody" })).unwrap_err();
    assert_eq!(missing["kind"], json!("not_found"));
}

/// The window's Content Security Policy admits the app's own files and its IPC only:
/// every directive lists `'self'`, `'none'`, `data:` images or the IPC origins, never
/// a remote host, a scheme wildcard or inline and evaluated script; plugins, frames
/// and form posts are shut. The built page itself loads no inline script.
#[test]
fn the_csp_admits_only_the_apps_own_content_and_its_ipc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config: Value = serde_json::from_str(&std::fs::read_to_string(root.join("tauri.conf.json")).unwrap()).unwrap();
    let csp = config["app"]["security"]["csp"].as_object().expect("a CSP, written as directives");
    let allowed = |directive: &str, source: &str| match source {
        "'self'" | "'none'" => true,
        "data:" => directive == "img-src",
        "ipc:" | "http://ipc.localhost" => directive == "connect-src",
        _ => false,
    };
    let mut refused = Vec::new();
    for (directive, sources) in csp {
        for source in sources.as_str().unwrap().split_whitespace() {
            if !allowed(directive, source) {
                refused.push(format!("{directive} {source}"));
            }
        }
    }
    assert_eq!(refused, Vec::<String>::new(), "sources beyond the app's own");
    for (directive, expected) in [
        ("default-src", "'self'"),
        ("script-src", "'self'"),
        ("object-src", "'none'"),
        ("base-uri", "'none'"),
        ("form-action", "'none'"),
        ("frame-ancestors", "'none'"),
    ] {
        assert_eq!(csp.get(directive).and_then(Value::as_str), Some(expected), "{directive}");
    }
    let page = std::fs::read_to_string(root.join("../ui/index.html")).unwrap();
    for script in page.split("<script").skip(1) {
        let tag = script.split('>').next().unwrap();
        assert!(tag.contains("src="), "an inline script in ui/index.html: <script{tag}>");
    }
}

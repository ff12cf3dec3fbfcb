//! The `switchboard` binary as a user runs it: exit codes, every problem at once,
//! the JSON contracts of `tools list` and `ask --events jsonl`, and edits on disk.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

mod support;
use support::{text, OnTerminal};

fn switchboard(config: &Path, arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("--config")
        .arg(config)
        .args(arguments)
        .env_remove("SWITCHBOARD_CONFIG")
        .output()
        .expect("switchboard runs")
}

/// A first start: `switchboard check` with no `--config` and a fresh config folder
/// writes the demo config at the default location; that file's path.
fn demo_config(folder: &Path) -> std::path::PathBuf {
    let config_home = folder.join("xdg");
    let output = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("check")
        .env("XDG_CONFIG_HOME", &config_home)
        .env_remove("SWITCHBOARD_CONFIG")
        .output()
        .expect("switchboard runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let path = config_home.join("switchboard").join("config.json");
    assert!(path.exists(), "the first start wrote the demo config at the default location");
    path
}

#[test]
fn check_reports_every_problem_and_exits_2() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"primary":"ghost","agents":[{"name":"a","provider":"local"},{"name":"a","provider":"demo"}],"agent_tools":[{"agent":"nobody","description":"x"}]}"#,
    )
    .unwrap();
    let output = switchboard(&path, &["check"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    for expected in ["agents[0].url", "agents[1].name", "primary", "warning: agent_tools[0].agent"] {
        assert!(stderr.contains(expected), "missing {expected} in:\n{stderr}");
    }

    std::fs::write(&path, "{\n  \"agents\": [,]\n}").unwrap();
    let output = switchboard(&path, &["check"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains(&format!("{}:2:", path.display())), "{}", text(&output.stderr));
}

#[test]
fn check_explains_autonomy_and_offers_the_agent_clis_on_path() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let bin = folder.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for program in ["claude", "codex"] {
        std::fs::write(bin.join(program), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join(program), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = folder.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"primary":"lead","agents":[{"name":"lead","provider":"demo"},{"name":"fixer","provider":"codex","autonomy":"edit"}]}"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--config"])
        .arg(&path)
        .arg("check")
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("agent \"fixer\": Codex runs with autonomy edit (--sandbox=workspace-write)"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "found claude at {}: add it with `switchboard agent add claude-code --provider claude-code`",
            bin.join("claude").display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("found codex"), "codex is configured already: {stdout}");
}

#[test]
fn only_the_default_location_is_created_a_named_missing_path_is_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    assert!(switchboard(&path, &["check"]).status.success(), "the demo config checks clean");
    let mistyped = folder.path().join("mistyped").join("config.json");
    for arguments in [&["check"][..], &["ask", "--approve", "all", "hello"][..], &["tools", "list", "--global"][..]] {
        let output = switchboard(&mistyped, arguments);
        assert_eq!(output.status.code(), Some(1), "{arguments:?}: {}", text(&output.stdout));
        let stderr = text(&output.stderr);
        assert!(stderr.contains("mistyped/config.json") && stderr.contains("No such file"), "{arguments:?}: {stderr}");
        assert!(!folder.path().join("mistyped").exists(), "{arguments:?} created something");
    }
    let from_environment = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("check")
        .env("SWITCHBOARD_CONFIG", &mistyped)
        .output()
        .unwrap();
    assert_eq!(from_environment.status.code(), Some(1), "a path named by the environment must exist too");
}

#[test]
fn tools_list_json_follows_the_contract_and_edits_land_on_disk() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    assert!(switchboard(&path, &["tools", "disable", "researcher", "--for", "assistant"]).status.success());
    let output = switchboard(&path, &["tools", "list", "--for", "assistant", "--json"]);
    assert!(output.status.success());
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(listed["agent"], "assistant");
    let rows: Vec<(String, String, bool)> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["tool_name"].as_str().unwrap().into(),
                row["scope"].as_str().unwrap().into(),
                row["enabled"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![("agent_researcher".into(), "override".into(), false), ("agent_summariser".into(), "global".into(), true)]
    );
    let table = text(&switchboard(&path, &["tools", "list", "--for", "assistant"]).stdout);
    let lines: Vec<Vec<&str>> =
        table.lines().map(|line| line.split("  ").map(str::trim).filter(|cell| !cell.is_empty()).collect()).collect();
    assert_eq!(lines[0], vec!["NAME", "SCOPE", "DESCRIPTION", "ENABLED"], "the columns, in order:\n{table}");
    assert_eq!((lines[1][0], lines[1][1], lines[1][3]), ("researcher", "override", "no"));
    let global: Value =
        serde_json::from_slice(&switchboard(&path, &["tools", "list", "--global", "--json"]).stdout).unwrap();
    assert_eq!(global["agent"], Value::Null);
    assert_eq!(global["tools"][0]["enabled"], true);
    let schema: Value =
        serde_json::from_slice(&switchboard(&path, &["tools", "schema", "--for", "assistant"]).stdout).unwrap();
    let names: Vec<&str> =
        schema.as_array().unwrap().iter().map(|tool| tool["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["escalate", "agent_summariser"], "built-ins first, disabled tools absent");
    let refused = switchboard(&path, &["tools", "remove", "nobody", "--global"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("no entry for \"nobody\""), "{}", text(&refused.stderr));
}

#[test]
fn ask_streams_jsonl_events_with_the_root_finish_last() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let output = switchboard(&path, &["ask", "--approve", "all", "--events", "jsonl", "Explain the call tree please"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let events: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    let sequence: Vec<u64> = events.iter().map(|event| event["seq"].as_u64().unwrap()).collect();
    assert!(sequence.windows(2).all(|pair| pair[1] == pair[0] + 1));
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["parent_id"].is_null(), last["status"].as_str()),
        (Some("call_finished"), true, Some("ok"))
    );
    assert!(events.iter().any(|event| event["depth"] == 1 && event["type"] == "text_delta"));
    for field in ["seq", "type", "call_id", "parent_id", "agent", "depth", "ts_ms"] {
        assert!(events.iter().all(|event| event.get(field).is_some()), "every event carries {field}");
    }
}

#[test]
fn ask_fails_clearly_when_the_root_cannot_be_reached() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"agents":[{"name":"far","provider":"local","url":"http://127.0.0.1:9","model":"m","timeout_secs":5}]}"#,
    )
    .unwrap();
    let output = switchboard(&path, &["ask", "--events", "none", "hello"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("unreachable") && stderr.contains("127.0.0.1:9"), "{stderr}");
}

#[test]
fn without_a_terminal_approval_requests_are_denied_and_said_so() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let output = switchboard(&path, &["ask", "--events", "jsonl", "Who approves this?"]);
    assert!(output.status.success(), "a denied delegate does not fail the turn: {}", text(&output.stderr));
    assert!(text(&output.stderr).contains("pass --approve all"), "{}", text(&output.stderr));
    let events: Vec<Value> = text(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let denied: Vec<&str> = events
        .iter()
        .filter(|event| event["type"] == "call_finished" && event["status"] == "denied")
        .map(|event| event["agent"].as_str().unwrap())
        .collect();
    assert_eq!(denied, vec!["researcher", "summariser"]);
    assert!(events
        .iter()
        .any(|event| event["type"] == "approval_resolved" && event["by"] == "policy" && event["decision"] == "deny"));
}

/// On a terminal (a pty from util-linux `script`), each approval request is a
/// prompt: the first answer approves always, the second denies. Each answer is typed
/// once its prompt is on the screen (no timing).
#[test]
fn on_a_terminal_each_approval_is_a_prompt() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let config = path.display().to_string();
    let mut terminal =
        OnTerminal::start(&["--config", &config, "ask", "--events", "pretty", "Please answer through the prompt"]);
    terminal.wait_for("Approve the call to researcher");
    terminal.type_line("a");
    terminal.wait_for("Approve the call to summariser");
    terminal.type_line("d");
    terminal.wait_for("■ assistant");
    let (success, stdout) = terminal.finish();
    assert!(success, "{stdout}");
    assert!(stdout.contains("✓ researcher approved for the session by the user"), "{stdout}");
    assert!(stdout.contains("✗ summariser denied by the user"), "{stdout}");
    assert!(stdout.contains("■ summariser denied"), "{stdout}");
    assert!(stdout.contains("■ assistant ok"), "{stdout}");
}

/// The pretty tree says what was decided in words, never a decision's or an error
/// kind's wire name: approved once by the policy (`--approve all`), denied by it
/// (`--approve none`).
#[test]
fn pretty_output_says_approvals_in_words() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    for (approve, expected) in [
        ("all", ["✓ researcher approved once by the policy", "✓ summariser approved once by the policy"]),
        ("none", ["✗ researcher denied by the policy", "✗ summariser denied by the policy"]),
    ] {
        let output = switchboard(&path, &["ask", "--approve", approve, "--events", "pretty", "How do agents work?"]);
        let stdout = text(&output.stdout);
        for line in expected {
            assert!(stdout.contains(line), "--approve {approve}: {stdout}");
        }
        for wire_name in ["approve_once", "approve_always", "(by the", "agent(s)", "not_offered", "max_calls"] {
            assert!(!stdout.contains(wire_name), "--approve {approve} printed {wire_name:?}: {stdout}");
        }
    }
}

/// `--events jsonl` is written as it happens: a reader sees a child's deltas while
/// the child is still streaming, long before the turn ends.
#[test]
fn jsonl_events_arrive_while_the_child_streams() {
    use std::io::BufRead;
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    assert!(switchboard(&path, &["check"]).status.success(), "check writes the demo config");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Slow the demo agents down so the turn takes seconds.
    for agent in config["agents"].as_array_mut().unwrap() {
        agent["delay_ms"] = serde_json::json!(60);
    }
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "--config",
            path.to_str().unwrap(),
            "ask",
            "--approve",
            "all",
            "--events",
            "jsonl",
            "Stream to me slowly please",
        ])
        .env_remove("SWITCHBOARD_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen_child_delta = false;
    for line in stdout.lines() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["depth"] == 1 && event["type"] == "text_delta" {
            seen_child_delta = true;
            break;
        }
    }
    assert!(seen_child_delta, "a child's delta was printed");
    assert!(child.try_wait().unwrap().is_none(), "the turn is still running when the first child delta is read");
    assert!(child.wait().unwrap().success());
}

#[test]
fn ask_in_a_session_logs_each_turn_and_sessions_shows_and_exports_them() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let data = folder.path().join("data");
    let data = data.to_str().unwrap();
    let ask = |message: &str| {
        switchboard(
            &path,
            &["--data-dir", data, "ask", "--approve", "all", "--events", "none", "--session", "notes", message],
        )
    };
    let first = ask("Explain the call tree please");
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(text(&first.stderr).contains("started session notes"), "{}", text(&first.stderr));
    let second = ask("And once more");
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(!text(&second.stderr).contains("started session"), "the second turn joins the session");

    let listed: Value =
        serde_json::from_slice(&switchboard(&path, &["--data-dir", data, "sessions", "list", "--json"]).stdout)
            .unwrap();
    assert_eq!((listed[0]["id"].as_str(), listed[0]["turns"].as_u64()), (Some("notes"), Some(2)), "{listed}");
    let shown = text(&switchboard(&path, &["--data-dir", data, "sessions", "show", "notes"]).stdout);
    let said: Vec<&str> = shown.lines().filter(|line| line.contains("] you: ")).collect();
    assert_eq!(said.len(), 2, "{shown}");
    assert!(said[0].ends_with("you: Explain the call tree please") && said[1].ends_with("you: And once more"));
    assert_eq!(shown.lines().filter(|line| line.starts_with("[ok] ")).count(), 2, "{shown}");

    let exported = switchboard(&path, &["--data-dir", data, "sessions", "export", "notes"]);
    assert!(exported.status.success(), "{}", text(&exported.stderr));
    let events: Vec<Value> = serde_json::from_slice(&exported.stdout).unwrap();
    let last = events.last().unwrap();
    assert_eq!((last["type"].as_str(), last["parent_id"].is_null()), (Some("call_finished"), true));
    assert!(events.iter().any(|event| event["depth"] == 1), "the export holds the whole tree");
    let markdown = switchboard(&path, &["--data-dir", data, "sessions", "export", "notes", "--markdown"]);
    assert!(markdown.status.success(), "{}", text(&markdown.stderr));
    let markdown = text(&markdown.stdout);
    assert!(markdown.contains("## You\n\nExplain the call tree please\n\n## assistant\n"), "{markdown}");
    assert!(markdown.contains("## You\n\nAnd once more\n"), "{markdown}");
    assert!(markdown.contains("Calls:\n\n- researcher: ok, "), "each turn lists its calls: {markdown}");

    let missing = switchboard(&path, &["--data-dir", data, "sessions", "show", "nowhere"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("no session \"nowhere\""), "{}", text(&missing.stderr));
}

#[test]
fn pretty_output_shows_control_sequences_escaped_never_obeyed() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    // An agent whose answer (and whose failure) carries colour, clipboard (OSC 52)
    // and title sequences.
    let script = r"printf 'ok \033[31mred\033]52;c;SGVsbG8=\007\033]0;pwned\007'; printf '\033[2J' >&2; exit $0";
    let write_config = |exit_code: &str| {
        let agent =
            json!({ "name": "evil", "provider": "subprocess", "command": "sh", "args": ["-c", script, exit_code] });
        std::fs::write(&path, json!({ "agents": [agent] }).to_string()).unwrap();
    };
    write_config("0");
    let data = folder.path().join("data");
    let data = data.to_str().unwrap();

    let answered = switchboard(&path, &["--data-dir", data, "ask", "--session", "s", "--events", "pretty", "hi"]);
    assert!(answered.status.success(), "{}", text(&answered.stderr));
    let stdout = text(&answered.stdout);
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "raw control characters reached the terminal: {stdout:?}"
    );
    assert!(stdout.contains(r"ok \u{1b}[31mred\u{1b}]52;c;SGVsbG8=\u{7}"), "{stdout}");
    // The stored answer, exported as Markdown to the terminal, is escaped the same way.
    let exported = switchboard(&path, &["--data-dir", data, "sessions", "export", "s", "--markdown"]);
    assert!(exported.status.success(), "{}", text(&exported.stderr));
    let markdown = text(&exported.stdout);
    assert!(!markdown.contains('\u{1b}') && !markdown.contains('\u{7}'), "raw control characters: {markdown:?}");
    assert!(markdown.contains(r"ok \u{1b}[31mred"), "{markdown}");
    write_config("3");
    let failed = switchboard(&path, &["ask", "--events", "pretty", "hi"]);
    assert_eq!(failed.status.code(), Some(1));
    let stderr = text(&failed.stderr);
    assert!(!stderr.contains('\u{1b}'), "raw control characters in the error: {stderr:?}");
    assert!(stderr.contains(r"\u{1b}[2J"), "{stderr}");
}

/// `switchboard` started in the background on `config`, its output dropped.
fn spawned(config: &Path, arguments: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--config", config.to_str().unwrap()])
        .args(arguments)
        .env_remove("SWITCHBOARD_CONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Whether a process is still there (a zombie counts as gone: it runs nothing).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Waits until `pid_file` holds the pid the agent's script wrote; that pid.
fn agent_pid(pid_file: &Path) -> String {
    let started = std::time::Instant::now();
    while !pid_file.exists() || std::fs::read_to_string(pid_file).unwrap().trim().is_empty() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the agent never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::read_to_string(pid_file).unwrap().trim().to_string()
}

/// Waits for the agent's process to end. Left alone it would sleep 60 s: an end
/// is told from none by waiting for it well inside that, never by timing a kill.
fn wait_until_gone(agent_pid: &str, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while running(agent_pid) {
        assert!(std::time::Instant::now() < deadline, "{what} left the agent's process {agent_pid} running");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn sigterm_and_sighup_cancel_the_turn_and_leave_no_agent_running() {
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("config.json");
        let pid_file = folder.path().join("agent.pid");
        let script = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
        let agent = json!({ "name": "slow", "provider": "subprocess", "command": "sh", "args": ["-c", script] });
        std::fs::write(&path, json!({ "agents": [agent] }).to_string()).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["--config", path.to_str().unwrap(), "ask", "--events", "none", "go"])
            .env_remove("SWITCHBOARD_CONFIG")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let agent_pid = agent_pid(&pid_file);
        assert!(running(&agent_pid));
        Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(code), "SIG{signal}: {}", text(&output.stderr));
        assert!(text(&output.stderr).contains("the turn was cancelled"), "{}", text(&output.stderr));
        wait_until_gone(&agent_pid, &format!("SIG{signal}"));
    }
}

/// `ask --session` killed with SIGKILL while a delegate runs: the agent's process
/// ends with it (the reaper), and the session says the turn was interrupted, with
/// what had finished and what was running, in words and in `--json`.
#[test]
fn a_turn_killed_with_sigkill_is_said_to_be_interrupted_and_leaves_nothing_running() {
    let folder = tempfile::tempdir().unwrap();
    let data = folder.path().join("data");
    let path = folder.path().join("config.json");
    let pid_file = folder.path().join("agent.pid");
    let script = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
    let slow = json!({ "name": "slow", "provider": "subprocess", "command": "sh", "args": ["-c", script] });
    std::fs::write(&path, json!({ "agents": [slow] }).to_string()).unwrap();
    let child =
        spawned(&path, &["--data-dir", data.to_str().unwrap(), "ask", "--events", "none", "--session", "work", "go"]);
    let agent_pid = agent_pid(&pid_file);
    Command::new("kill").args(["-KILL", &child.id().to_string()]).status().unwrap();
    let mut child = child;
    child.wait().unwrap();
    wait_until_gone(&agent_pid, "SIGKILL");
    let data = data.to_str().unwrap();
    let shown = switchboard(&path, &["--data-dir", data, "sessions", "show", "work"]);
    let shown = text(&shown.stdout);
    assert!(shown.contains("you: go"), "{shown}");
    assert!(
        shown.contains(
            "[interrupted] the process running this turn ended before it did; finished: nothing; was running: slow"
        ),
        "{shown}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&switchboard(&path, &["--data-dir", data, "sessions", "show", "work", "--json"]).stdout)
            .unwrap();
    assert_eq!(json["interrupted"][0]["running"], json!(["slow"]), "{json}");
}

/// A turn killed with SIGKILL after one of its two delegates answered, resumed with
/// `sessions resume`: the answered delegate is not run again (its program counts
/// its runs), the one that was running runs again, and the turn ends with both
/// answers; a turn resumed once is not resumed again.
#[test]
fn an_interrupted_turn_is_resumed_without_running_what_had_finished() {
    let folder = tempfile::tempdir().unwrap();
    let (data, path) = (folder.path().join("data"), folder.path().join("config.json"));
    let (runs, flag, pid_file) =
        (folder.path().join("fast.runs"), folder.path().join("slow.may-finish"), folder.path().join("slow.pid"));
    let fast = format!("echo run >> {}; echo fast answer", runs.display());
    let slow = format!(
        "if [ -e {flag} ]; then echo slow answer; else sleep 60 & echo $! > {pid}; wait; fi",
        flag = flag.display(),
        pid = pid_file.display()
    );
    let config = json!({
        "primary": "planner",
        "agents": [
            { "name": "planner", "provider": "demo", "model": "demo-planner" },
            { "name": "fast", "provider": "subprocess", "command": "sh", "args": ["-c", fast] },
            { "name": "slow", "provider": "subprocess", "command": "sh", "args": ["-c", slow] },
        ],
        "agent_tools": [
            { "agent": "fast", "description": "Answers at once." },
            { "agent": "slow", "description": "Takes its time." },
        ],
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let data_arg = data.to_str().unwrap();
    let mut child = spawned(
        &path,
        &[
            "--data-dir",
            data_arg,
            "ask",
            "--events",
            "none",
            "--approve",
            "all",
            "--session",
            "work",
            "compare the two",
        ],
    );
    let agent_pid = agent_pid(&pid_file);
    // Killed once fast's answer is in the log (the log, not the program, says so).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let log = switchboard(&path, &["--data-dir", data_arg, "sessions", "show", "work", "--json"]);
        let log: serde_json::Value = serde_json::from_slice(&log.stdout).unwrap_or_default();
        let answered = log["records"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|record| record["event"]["agent"] == "fast" && record["event"]["type"] == "call_finished");
        if answered {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "fast never answered: {log}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Command::new("kill").args(["-KILL", &child.id().to_string()]).status().unwrap();
    child.wait().unwrap();
    wait_until_gone(&agent_pid, "SIGKILL");
    let shown = text(&switchboard(&path, &["--data-dir", data_arg, "sessions", "show", "work"]).stdout);
    assert!(shown.contains("[interrupted]") && shown.contains("finished: fast;"), "{shown}");

    std::fs::write(&flag, "").unwrap();
    let resumed = switchboard(&path, &["--data-dir", data_arg, "sessions", "resume", "work", "--approve", "all"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let answer = text(&resumed.stdout);
    assert!(answer.contains("fast answer") && answer.contains("slow answer"), "{answer}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 1, "fast ran again");
    let shown = text(&switchboard(&path, &["--data-dir", data_arg, "sessions", "show", "work"]).stdout);
    assert!(shown.contains("resumes interrupted turn") && !shown.contains("[interrupted]"), "{shown}");

    let again = switchboard(&path, &["--data-dir", data_arg, "sessions", "resume", "work"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("has no interrupted turn to resume"), "{}", text(&again.stderr));
    let log: serde_json::Value = serde_json::from_slice(
        &switchboard(&path, &["--data-dir", data_arg, "sessions", "show", "work", "--json"]).stdout,
    )
    .unwrap();
    let first = log["records"].as_array().unwrap().iter().find(|record| record["type"] == "user_message").unwrap();
    let turn = first["turn_id"].as_str().unwrap();
    let named = switchboard(&path, &["--data-dir", data_arg, "sessions", "resume", "work", "--turn", turn]);
    assert_eq!(named.status.code(), Some(1));
    assert!(text(&named.stderr).contains("it was resumed already"), "{}", text(&named.stderr));
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 1, "a refused resume runs nothing");
}

#[test]
fn an_agent_that_ignores_sigterm_does_not_outlive_the_cli() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let pid_file = folder.path().join("agent.pid");
    let script = format!("trap '' TERM; sleep 60 & echo $! > {}; wait", pid_file.display());
    let agent = json!({ "name": "stubborn", "provider": "subprocess", "command": "sh", "args": ["-c", script], "timeout_secs": 1 });
    std::fs::write(&path, json!({ "agents": [agent] }).to_string()).unwrap();
    let output = switchboard(&path, &["ask", "--events", "none", "go"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("timeout"), "{}", text(&output.stderr));
    let agent_pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    // The CLI has exited, and with it the watcher thread that would SIGKILL the group
    // after the grace period: the agent (which ignores SIGTERM, and so does its sleep)
    // is gone only if the CLI killed it before exiting. Left alone it would live 60 s,
    // so waiting up to 30 s for its end tells the two apart without timing luck.
    wait_until_gone(&agent_pid, "the CLI's exit");
}

#[test]
fn check_says_when_an_agents_program_is_not_found() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let agents = json!([
        { "name": "here", "provider": "subprocess", "command": "sh" },
        { "name": "gone", "provider": "subprocess", "command": "no-such-agent-program" },
        { "name": "coder", "provider": "aider-cli", "command": "/nonexistent/aider" }
    ]);
    std::fs::write(&path, json!({ "agents": agents }).to_string()).unwrap();
    let output = switchboard(&path, &["check"]);
    assert!(output.status.success(), "a missing program is a warning: {}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("agents[1].command") && stderr.contains("\"no-such-agent-program\" was not found"),
        "{stderr}"
    );
    assert!(stderr.contains("agents[2].command") && stderr.contains("install aider-chat"), "{stderr}");
    assert!(!stderr.contains("agents[0]"), "{stderr}");
}

/// `agent add|edit|remove`, `roles set` and `agent test`: the forms' edits from
/// flags, each on disk at once, refused in words (nothing written) when it breaks a rule.
#[test]
fn agents_and_roles_are_edited_from_flags() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let on_disk = || -> Value { serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap() };
    let ok = |arguments: &[&str]| {
        let output = switchboard(&path, arguments);
        assert!(output.status.success(), "{arguments:?}: {}", text(&output.stderr));
        output
    };

    ok(&[
        "agent",
        "add",
        "llama",
        "--provider",
        "openai",
        "--url",
        "http://127.0.0.1:9/v1",
        "--model",
        "llama3",
        "--api-key-env",
        "LLAMA_KEY",
    ]);
    let llama = on_disk()["agents"].as_array().unwrap().iter().find(|agent| agent["name"] == "llama").cloned().unwrap();
    assert_eq!(
        llama,
        json!({ "name": "llama", "provider": "local", "url": "http://127.0.0.1:9/v1", "model": "llama3", "api_key_env": "LLAMA_KEY" })
    );

    // A key where its variable's name belongs is refused, and nothing is written.
    let before = std::fs::read(&path).unwrap();
    let refused = switchboard(&path, &["agent", "edit", "llama", "--api-key-env", "sk-live-abcdef1234567890"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("agents[4].api_key_env"), "{}", text(&refused.stderr));
    assert!(!text(&refused.stderr).contains("abcdef1234567890"), "the refusal does not repeat the key");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    ok(&["agent", "edit", "llama", "--rename", "llama3", "--unset", "api_key_env", "--timeout-secs", "30"]);
    ok(&["roles", "set", "--primary", "llama3", "--escalation", "expert"]);
    let config = on_disk();
    assert_eq!(config["primary"], "llama3");
    assert_eq!(
        config["agents"][4],
        json!({ "name": "llama3", "provider": "local", "url": "http://127.0.0.1:9/v1", "model": "llama3", "timeout_secs": 30 })
    );
    ok(&["agent", "edit", "llama3", "--approval", "auto"]);
    assert_eq!(on_disk()["agents"][4]["approval"], "auto");
    let wrong = switchboard(&path, &["agent", "edit", "llama3", "--approval", "sometimes"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("one of ask, auto, deny"), "{}", text(&wrong.stderr));
    ok(&["agent", "edit", "llama3", "--unset", "approval"]);
    assert_eq!(on_disk()["agents"][4].get("approval"), None);

    let primary = switchboard(&path, &["agent", "remove", "llama3"]);
    assert_eq!(primary.status.code(), Some(1));
    assert!(text(&primary.stderr).contains("\"llama3\" is the primary agent"), "{}", text(&primary.stderr));

    let kept = ok(&["agent", "remove", "summariser"]);
    assert!(text(&kept.stderr).contains("1 tool entry still name \"summariser\""), "{}", text(&kept.stderr));
    assert!(on_disk()["agent_tools"].as_array().unwrap().iter().any(|entry| entry["agent"] == "summariser"));
    ok(&["agent", "remove", "researcher", "--remove-tool-entries"]);
    assert!(on_disk()["agent_tools"].as_array().unwrap().iter().all(|entry| entry["agent"] != "researcher"));

    // Nothing listens on port 9: the test fails, in words, with exit 1.
    let test = switchboard(&path, &["agent", "test", "llama3"]);
    assert_eq!(test.status.code(), Some(1));
    assert!(text(&test.stdout).contains("FAIL list models"), "{}", text(&test.stdout));
    assert!(text(&test.stdout).contains("Nothing answers at http://127.0.0.1:9/v1"), "{}", text(&test.stdout));
    ok(&["roles", "set", "--no-escalation"]);
    assert_eq!(on_disk().get("escalation"), None);
}

/// `tools explain` says why each entry is or is not offered, and with narrowing on,
/// what each agent of a chain is offered: the confused deputy, y below x, has z
/// taken away (x may not call it).
#[test]
fn tools_explain_shows_the_entries_and_what_narrowing_takes_away_along_the_chain() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let mut config = json!({
        "agents": [
            {"name": "x", "provider": "demo", "tools": [{"agent": "z", "description": "Not for x.", "enabled": false}]},
            {"name": "y", "provider": "demo"},
            {"name": "z", "provider": "demo"}
        ],
        "agent_tools": [{"agent": "y", "description": "Y."}, {"agent": "z", "description": "Z."}],
        "limits": {"max_depth": 3}
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let off = switchboard(&path, &["tools", "explain", "--for", "x"]);
    assert!(off.status.success(), "{}", text(&off.stderr));
    let off = text(&off.stdout);
    assert!(off.contains("agent_y") && off.contains("agent_z") && off.contains("not offered: disabled"), "{off}");
    assert!(!off.contains("Along the chain"), "nothing about chains while narrowing is off:\n{off}");

    config["limits"]["narrow_delegation"] = json!(true);
    std::fs::write(&path, config.to_string()).unwrap();
    let on = text(&switchboard(&path, &["tools", "explain", "--for", "x"]).stdout);
    assert!(on.contains("  x (depth 0): offered y\n"), "{on}");
    assert!(on.contains("    y (depth 1, narrowed): offered nothing; narrowed away: z\n"), "{on}");
    let json: Value =
        serde_json::from_slice(&switchboard(&path, &["tools", "explain", "--for", "x", "--json"]).stdout).unwrap();
    assert_eq!(json["chains"][1]["narrowed_away"], json!(["z"]));
    let unknown = switchboard(&path, &["tools", "explain", "--for", "nobody"]);
    assert_eq!(unknown.status.code(), Some(1));
}

/// `switchboard report` over turns `ask` logged: the demo primary's delegations by
/// tool-agent, as a table, JSON and CSV; a date range; a date it cannot read.
#[test]
fn report_sums_the_delegations_ask_logged_as_a_table_json_and_csv() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let data = folder.path().join("data");
    let data = data.to_str().unwrap();
    for message in ["How do agents call agents?", "Summarise the call tree"] {
        let asked = switchboard(
            &path,
            &["--data-dir", data, "ask", "--approve", "all", "--events", "none", "--session", "notes", message],
        );
        assert!(asked.status.success(), "{}", text(&asked.stderr));
    }
    let json: Value =
        serde_json::from_slice(&switchboard(&path, &["--data-dir", data, "report", "--json"]).stdout).unwrap();
    assert_eq!((json["sessions"].as_u64(), json["turns"].as_u64()), (Some(1), Some(2)));
    let agents = json["agents"].as_array().unwrap();
    assert!(!agents.is_empty(), "the demo primary delegates: {json}");
    let calls: u64 = agents.iter().map(|agent| agent["calls"].as_u64().unwrap()).sum();
    let ok: u64 = agents.iter().map(|agent| agent["ok"].as_u64().unwrap()).sum();
    assert!(calls >= 2 && ok == calls, "{json}");
    assert_eq!(json["primaries"][0]["primary"], "assistant");

    let table = text(&switchboard(&path, &["--data-dir", data, "report"]).stdout);
    assert!(
        table.starts_with("1 sessions, 2 turns\n") && table.contains("TOOL-AGENT") && table.contains("assistant:"),
        "{table}"
    );
    let csv = text(&switchboard(&path, &["--data-dir", data, "report", "--csv"]).stdout);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("agent,calls,ok,error,denied,limited,cancelled,median_ms"), "{csv}");
    assert_eq!(rows.len(), agents.len() + 1);

    let old = switchboard(&path, &["--data-dir", data, "report", "--json", "--until", "2020-01-01"]);
    let old: Value = serde_json::from_slice(&old.stdout).unwrap();
    assert_eq!((old["turns"].as_u64(), old["agents"].as_array().unwrap().len()), (Some(0), 0));
    let bad = switchboard(&path, &["--data-dir", data, "report", "--since", "last week"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("YYYY-MM-DD"), "{}", text(&bad.stderr));
}

/// `sessions rerun` runs a logged call again beside the first (the same agent,
/// an edited request), as a turn the session marks as a re-run; a call that is
/// not there is an error that says so.
#[test]
fn sessions_rerun_runs_a_logged_call_again_and_shows_both() {
    let folder = tempfile::tempdir().unwrap();
    let path = demo_config(folder.path());
    let data = folder.path().join("data");
    let data = data.to_str().unwrap();
    let asked = switchboard(
        &path,
        &[
            "--data-dir",
            data,
            "ask",
            "--approve",
            "all",
            "--events",
            "none",
            "--session",
            "notes",
            "How do agents call agents?",
        ],
    );
    assert!(asked.status.success(), "{}", text(&asked.stderr));
    let rerun = |extra: &[&str]| {
        let mut arguments = vec!["--data-dir", data, "sessions", "rerun", "notes", "c2", "--approve", "all"];
        arguments.extend_from_slice(extra);
        switchboard(&path, &arguments)
    };
    let json = rerun(&["--request", "Only the single most important fact, please", "--json"]);
    assert!(json.status.success(), "{}", text(&json.stderr));
    let outcome: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(outcome["original"]["agent"], outcome["rerun"]["agent"]);
    assert_eq!((outcome["original"]["status"].as_str(), outcome["rerun"]["status"].as_str()), (Some("ok"), Some("ok")));
    assert_ne!(outcome["original"]["turn_id"], outcome["rerun"]["turn_id"]);

    let table = text(&rerun(&[]).stdout);
    assert!(
        table.contains("FIRST RUN") && table.contains("RUN AGAIN") && table.contains("--- run again ---"),
        "{table}"
    );
    let shown = text(&switchboard(&path, &["--data-dir", data, "sessions", "show", "notes"]).stdout);
    assert!(shown.contains("runs call c2 of") && shown.contains("Run again: "), "{shown}");

    let missing = switchboard(&path, &["--data-dir", data, "sessions", "rerun", "notes", "c99"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("no tool-agent call \"c99\""), "{}", text(&missing.stderr));
}

/// `mcp connect claude-code --write` in a folder someone else wrote (a cloned
/// repository): links where its backup and its file written aside go are replaced,
/// never written through; the file keeps its mode and the backup is 0600; a config
/// that is itself a link is refused, its target untouched.
#[test]
fn mcp_connect_write_follows_no_link_and_keeps_the_files_modes() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let folder = tempfile::tempdir().unwrap();
    let project = folder.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let config = demo_config(folder.path());
    let victim = folder.path().join("bashrc");
    std::fs::write(&victim, "export PRECIOUS=1\n").unwrap();
    let mcp = project.join(".mcp.json");
    std::fs::write(&mcp, "{\"mcpServers\": {}}\n").unwrap();
    std::fs::set_permissions(&mcp, std::fs::Permissions::from_mode(0o600)).unwrap();
    symlink(&victim, project.join(".mcp.json.switchboard-backup")).unwrap();
    symlink(folder.path().join("created"), project.join(".mcp.switchboard-partial")).unwrap();
    let connect = |project: &Path| {
        Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["--config", config.to_str().unwrap(), "mcp", "connect", "claude-code", "--write"])
            .current_dir(project)
            .env("HOME", folder.path())
            .env_remove("SWITCHBOARD_CONFIG")
            .output()
            .expect("switchboard runs")
    };
    let written = connect(&project);
    assert!(written.status.success(), "{}", text(&written.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "export PRECIOUS=1\n", "nothing written through the link");
    assert!(!folder.path().join("created").exists(), "no file created through a dangling link");
    let mode = |path: &Path| std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777;
    let backup = project.join(".mcp.json.switchboard-backup");
    assert!(std::fs::symlink_metadata(&backup).unwrap().is_file(), "the backup replaced the link");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "{\"mcpServers\": {}}\n");
    assert_eq!(mode(&backup), 0o600, "the backup is the owner's alone");
    assert!(std::fs::symlink_metadata(&mcp).unwrap().is_file(), "the config is a file, not a link");
    assert!(std::fs::read_to_string(&mcp).unwrap().contains("switchboard"), "the entry was added");
    assert_eq!(mode(&mcp), 0o600, "the config kept its mode");

    let linked = folder.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    symlink(&victim, linked.join(".mcp.json")).unwrap();
    let refused = connect(&linked);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stdout));
    assert!(text(&refused.stderr).contains("is a link to"), "{}", text(&refused.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "export PRECIOUS=1\n", "the link's target untouched");
    assert!(std::fs::symlink_metadata(linked.join(".mcp.json")).unwrap().file_type().is_symlink());
}

/// Twenty `ask --session NEW` started at once: one session, twenty turns, no error.
#[test]
fn concurrent_first_use_of_a_session_name_makes_one_session() {
    let folder = tempfile::tempdir().unwrap();
    let config = folder.path().join("config.json");
    std::fs::write(&config, r#"{"primary": "a", "agents": [{"name": "a", "provider": "demo"}]}"#).unwrap();
    let data = folder.path().join("data");
    // Each waits for a line on a FIFO (held open here, read and write, so no open
    // blocks); twenty lines written at once let them all go together.
    let gate = folder.path().join("gate");
    assert!(Command::new("mkfifo").arg(&gate).status().unwrap().success());
    let mut opener = std::fs::OpenOptions::new().read(true).write(true).open(&gate).unwrap();
    let asks: Vec<_> = (0..20)
        .map(|index| {
            Command::new("sh")
                .args(["-c", r#"read _ < "$0"; exec "$@""#, gate.to_str().unwrap()])
                .arg(env!("CARGO_BIN_EXE_switchboard"))
                .args(["--config", config.to_str().unwrap(), "--data-dir", data.to_str().unwrap()])
                .args(["ask", "--session", "NEW", "--events", "none", &format!("hello {index}")])
                .env_remove("SWITCHBOARD_CONFIG")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("switchboard runs")
        })
        .collect();
    std::io::Write::write_all(&mut opener, &[b'\n'; 20]).unwrap();
    for ask in asks {
        let output = ask.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let listed = switchboard(&config, &["--data-dir", data.to_str().unwrap(), "sessions", "list", "--json"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let sessions: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let sessions = sessions.as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!((sessions[0]["id"].as_str(), sessions[0]["turns"].as_u64()), (Some("NEW"), Some(20)), "{sessions:?}");
}

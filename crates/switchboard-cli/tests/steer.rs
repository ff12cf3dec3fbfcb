//! `switchboard ask` on a terminal steers a running call: a line typed while the
//! turn runs is sent into the latest started call that can take it (`@agent
//! message` picks one). The delegate is an HTTP agent on aimock (loopback) that
//! calls its search tool at every step until it sees "stop and summarise"; the
//! search is a command that waits on a FIFO, so the line is typed, and taken,
//! while the worker waits for it (no timing).

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

mod support;
use support::OnTerminal;

struct Aimock(Child);

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// aimock with `fixtures`, once it answers on its port.
fn aimock(folder: &std::path::Path, fixtures: serde_json::Value) -> (Aimock, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let fixtures_path = folder.join("fixtures.json");
    std::fs::write(&fixtures_path, fixtures.to_string()).unwrap();
    let config_path = folder.join("aimock.json");
    let config = json!({ "port": port, "host": "127.0.0.1", "llm": { "fixtures": fixtures_path, "latency": 0 } });
    std::fs::write(&config_path, config.to_string()).unwrap();
    let program = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers/node_modules/.bin/aimock");
    let child = Command::new(&program)
        .arg("--config")
        .arg(&config_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {} ({error}); run `make setup`", program.display()));
    let peer = Aimock(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "aimock did not listen within 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    (peer, format!("http://127.0.0.1:{port}"))
}

#[test]
fn a_line_typed_while_the_turn_runs_steers_the_delegate() {
    let folder = tempfile::tempdir().unwrap();
    let (_peer, base) = aimock(
        folder.path(),
        json!({ "fixtures": [
            { "match": { "model": "boss-m", "hasToolResult": false },
              "response": { "toolCalls": [{ "id": "b1", "name": "agent_worker", "arguments": { "request": "find why the build broke" } }] } },
            { "match": { "model": "boss-m", "hasToolResult": true }, "response": { "content": "The worker reported back." } },
            { "match": { "model": "worker-m", "userMessage": "stop and summarise" },
              "response": { "content": "Summary: nothing found." } },
            { "match": { "model": "worker-m" },
              "response": { "toolCalls": [{ "id": "w1", "name": "agent_search", "arguments": { "request": "build logs" } }] } }
        ]}),
    );
    let fifo = folder.path().join("search-may-answer");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let http = |name: &str| json!({ "name": name, "provider": "local", "url": base, "model": format!("{name}-m"), "timeout_secs": 60 });
    let mut boss = http("boss");
    boss["tools"] = json!([{ "agent": "worker", "description": "Digs into a problem.", "approval": "auto" }]);
    let mut worker = http("worker");
    worker["tools"] = json!([{ "agent": "search", "description": "Searches.", "approval": "auto" }]);
    let search = json!({
        "name": "search", "provider": "subprocess", "command": "/bin/sh",
        "args": ["-c", format!("read line < '{}'; echo nothing relevant", fifo.display())]
    });
    let config = json!({ "primary": "boss", "agents": [boss, worker, search], "limits": { "max_depth": 2 } });
    let path = folder.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();

    let config = path.display().to_string();
    let mut terminal =
        OnTerminal::start(&["--config", &config, "ask", "--events", "pretty", "Why did the build break?"]);
    terminal.wait_for("▶ search");
    terminal.type_line("@search look elsewhere");
    terminal.wait_for("search: that call cannot be steered");
    terminal.type_line("stop and summarise");
    terminal.wait_for("sent to worker");
    std::fs::OpenOptions::new().write(true).open(&fifo).unwrap().write_all(b"go\n").unwrap();
    terminal.wait_for("■ boss");
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    assert!(screen.contains("runs its own loop on the request it was started with"), "{screen}");
    assert!(screen.contains("↪ worker was steered by the user: stop and summarise"), "{screen}");
    assert!(screen.contains("│ worker: Summary: nothing found."), "{screen}");
    assert!(screen.contains("■ worker ok"), "{screen}");
    assert_eq!(screen.matches("▶ search").count(), 1, "one search, then the summary: {screen}");
    assert!(screen.contains("The worker reported back."), "{screen}");
}

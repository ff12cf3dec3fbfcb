//! What the CLI suites share: `switchboard` run on a real terminal (`script`
//! gives it a pty), read as a user reads the screen, typed into once a prompt is
//! on it (no timing).

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `switchboard` with `arguments` (one shell word each) on a terminal.
pub struct OnTerminal {
    child: Child,
    stdin: Option<ChildStdin>,
    chunks: mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// Everything shown so far.
    pub screen: String,
}

impl OnTerminal {
    pub fn start(arguments: &[&str]) -> OnTerminal {
        let quoted: Vec<String> =
            arguments.iter().map(|argument| format!("'{}'", argument.replace('\'', "'\\''"))).collect();
        let inner = format!("{} {}", env!("CARGO_BIN_EXE_switchboard"), quoted.join(" "));
        let mut child = Command::new("script")
            .args(["-qec", &inner, "/dev/null"])
            .env_remove("SWITCHBOARD_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script runs");
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let (sender, chunks) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 || sender.send(text(&buffer[..read])).is_err() {
                    break;
                }
            }
        });
        OnTerminal { child, stdin, chunks, reader: Some(reader), screen: String::new() }
    }

    /// Reads until `wanted` is on the screen (a guard of 120 s fails a test that would hang).
    pub fn wait_for(&mut self, wanted: &str) {
        while !self.screen.contains(wanted) {
            match self.chunks.recv_timeout(std::time::Duration::from_secs(120)) {
                Ok(chunk) => self.screen.push_str(&chunk),
                Err(error) => panic!("{wanted:?} never shown ({error}): {}", self.screen),
            }
        }
    }

    pub fn type_line(&mut self, line: &str) {
        self.stdin.as_mut().expect("stdin is open").write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// Closes stdin, waits for the program, and returns whether it succeeded with
    /// everything it showed.
    pub fn finish(mut self) -> (bool, String) {
        drop(self.stdin.take());
        let success = self.child.wait().unwrap().success();
        self.reader.take().unwrap().join().unwrap();
        let rest: String = self.chunks.try_iter().collect();
        (success, self.screen + &rest)
    }
}

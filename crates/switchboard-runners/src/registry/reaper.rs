//! The reaper: a small process a registry starts with its first process group,
//! which outlives the program by an instant so that a call's agents do not, even
//! when the program is killed with SIGKILL (no handler of ours runs then). The
//! registry tells it each process group it starts and each it has seen end (a
//! line on the reaper's stdin); when that pipe closes, because the program exited
//! or was killed (or the registry was dropped), the reaper sends SIGKILL to every
//! group still listed, the agents' children and grandchildren with them, and
//! exits. A group leader's `PR_SET_PDEATHSIG` would not reach the grandchildren.
//! It is a POSIX `sh` loop in a process group of its own, ignoring the signals
//! that end a terminal's foreground group, so only the pipe closing ends it
//! (forking without exec would need `unsafe`, which the workspace forbids).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

use nix::unistd::Pid;

/// The reaper's loop: `+PGID` lists a group, `-PGID` forgets it; at the end of
/// its input, every group listed is killed.
const SCRIPT: &str = r#"trap '' INT TERM HUP PIPE
groups=" "
while read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) kept=" "; for g in $groups; do [ "$g" = "${line#-}" ] || kept="$kept$g "; done; groups=$kept ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done"#;

/// One registry's reaper: not started until a group is.
#[derive(Default)]
pub(super) struct Reaper(Mutex<Running>);

#[derive(Default)]
enum Running {
    #[default]
    NotYet,
    Started(Child, ChildStdin),
    /// It could not start (said once, in the log); groups are still ended on
    /// every other path: a call's end, a signal, the program's exit.
    Failed,
}

impl Reaper {
    /// Tells the reaper a group started (`true`) or is gone (`false`), starting
    /// it with the first group.
    pub(super) fn tell(&self, group: Pid, started: bool) {
        let mut running = self.0.lock().unwrap();
        if matches!(*running, Running::NotYet) && started {
            *running = start();
        }
        if let Running::Started(_, pipe) = &mut *running {
            let sign = if started { '+' } else { '-' };
            let _ = pipe.write_all(format!("{sign}{}\n", group.as_raw()).as_bytes());
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        // Closing the pipe ends the reaper (every group it listed was told gone);
        // it is waited for off this thread, so it leaves no zombie behind.
        if let Running::Started(mut child, pipe) = std::mem::take(self.0.get_mut().unwrap()) {
            drop(pipe);
            std::thread::spawn(move || child.wait());
        }
    }
}

fn start() -> Running {
    // The pipe is close-on-exec, so the agents the program starts never hold it open.
    let started = Command::new("/bin/sh")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .process_group(0)
        .spawn();
    match started {
        Ok(mut reaper) => match reaper.stdin.take() {
            Some(pipe) => Running::Started(reaper, pipe),
            None => Running::Failed,
        },
        Err(error) => {
            tracing::warn!("the reaper did not start ({error}): agents may outlive a killed program");
            Running::Failed
        }
    }
}

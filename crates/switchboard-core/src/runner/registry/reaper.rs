//! The reaper: a small process a shell starts first thing, which outlives the
//! shell by an instant so that a call's agents do not, even when the shell is
//! killed with SIGKILL (no handler of ours runs then). The shell tells it each
//! process group it starts and each it has seen end (a line on the reaper's
//! stdin); when that pipe closes, because the shell exited or was killed, the
//! reaper sends SIGKILL to every group still listed, the agents' children and
//! grandchildren with them, and exits. A group leader's `PR_SET_PDEATHSIG` would
//! not reach the grandchildren. It is a POSIX `sh` loop in a process group of its
//! own, ignoring the signals that end a terminal's foreground group, so only the
//! pipe closing ends it (forking without exec would need `unsafe`, which the
//! workspace forbids).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
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

/// The shell's end of the reaper's stdin, when the reaper runs.
static PIPE: Mutex<Option<ChildStdin>> = Mutex::new(None);

/// Starts the reaper (once; later calls do nothing). A shell calls this as it
/// starts. Without it (a library user, the core's tests) groups are still ended
/// on every other path: a call's end, a signal, the shell's exit.
pub fn start_reaper() {
    let mut pipe = PIPE.lock().unwrap();
    if pipe.is_some() {
        return;
    }
    // The pipe is close-on-exec, so the agents the shell starts never hold it open.
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
        Ok(mut reaper) => *pipe = reaper.stdin.take(),
        Err(error) => tracing::warn!("the reaper did not start ({error}): agents may outlive a killed shell"),
    }
}

/// Tells the reaper a group started (`true`) or is gone (`false`).
pub(super) fn tell(group: Pid, started: bool) {
    let sign = if started { '+' } else { '-' };
    if let Some(pipe) = PIPE.lock().unwrap().as_mut() {
        let _ = pipe.write_all(format!("{sign}{}\n", group.as_raw()).as_bytes());
    }
}

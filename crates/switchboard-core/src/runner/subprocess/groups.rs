//! What must not outlive a call: each agent's process group, ended when its
//! call ends (SIGTERM, SIGKILL after the grace period), the groups still alive
//! listed so a shell can end them as it exits (and told to the reaper, which
//! ends them if the shell is killed), and the signals both shells end on.

use std::sync::Mutex;
use std::time::Instant;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::GRACE;

/// Groups sent SIGTERM whose grace period has not run out, with its end.
static PENDING: Mutex<Vec<(Pid, Instant)>> = Mutex::new(Vec::new());

/// Ends a call's process group when dropped (the call ended, one way or another):
/// SIGTERM now; SIGKILL when the grace period is over, from a watcher thread, or
/// from `end_pending_groups` if the program is about to exit first.
pub(crate) struct ProcessGroup(Option<Pid>);

/// The groups of `ProcessGroup`s not dropped yet: a call's agent, or an MCP stdio
/// server kept by the runner cache, which `end_every_group` ends at exit.
static LIVE: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

impl ProcessGroup {
    /// The group `child` leads (it was spawned with `process_group(0)`).
    pub(crate) fn of(child: &tokio::process::Child) -> ProcessGroup {
        let group = child.id().map(|id| Pid::from_raw(id as i32));
        if let Some(group) = group {
            LIVE.lock().unwrap().push(group);
            super::reaper::tell(group, true);
        }
        ProcessGroup(group)
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let Some(group) = self.0.take() else { return };
        LIVE.lock().unwrap().retain(|live| *live != group);
        terminate(group);
    }
}

/// SIGTERM to `group` now, SIGKILL once the grace period is over.
fn terminate(group: Pid) {
    {
        if killpg(group, Signal::SIGTERM).is_err() {
            super::reaper::tell(group, false);
            return; // nothing of the group is left
        }
        let deadline = Instant::now() + GRACE;
        PENDING.lock().unwrap().push((group, deadline));
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            finish(group);
        });
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP (Ctrl-C, `kill`, a closed terminal) and
/// returns its number; `None` when the handlers cannot be installed. The CLI and
/// the app both end on these, then call `end_every_group`.
pub async fn ending_signal() -> Option<i32> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt()).ok()?;
    let mut terminate = signal(SignalKind::terminate()).ok()?;
    let mut hangup = signal(SignalKind::hangup()).ok()?;
    tokio::select! {
        _ = interrupt.recv() => Some(2),
        _ = terminate.recv() => Some(15),
        _ = hangup.recv() => Some(1),
    }
}

/// What a shell calls as it exits: every group still alive (an MCP stdio server the
/// runner cache kept, since the cache itself is not dropped when a program exits) is
/// ended like a dropped one, then `end_pending_groups` waits them all out.
pub fn end_every_group() {
    let live: Vec<Pid> = LIVE.lock().unwrap().drain(..).collect();
    for group in live {
        terminate(group);
    }
    end_pending_groups();
}

/// SIGKILL to a pending group, once; forgotten afterwards.
fn finish(group: Pid) {
    let mut pending = PENDING.lock().unwrap();
    if let Some(position) = pending.iter().position(|(pending_group, _)| *pending_group == group) {
        pending.remove(position);
        let _ = killpg(group, Signal::SIGKILL);
        super::reaper::tell(group, false);
    }
}

/// Waits out the grace periods still running and kills what is left of those
/// groups (and lets the `CancelTask` requests of cancelled A2A calls and the
/// `notifications/cancelled` of MCP ones go out): a
/// shell calls this before it exits, so an agent that ignores SIGTERM, or a remote
/// task, does not outlive the program that started it.
pub fn end_pending_groups() {
    // Remote agents' tasks and tools are told to stop before the program goes, too.
    crate::runner::a2a::finish_pending_cancels();
    crate::runner::mcp::finish_pending_cancels();
    loop {
        let next = PENDING.lock().unwrap().first().copied();
        let Some((group, deadline)) = next else { return };
        // A group whose processes all exited needs no wait (signal 0 probes it).
        if killpg(group, None).is_ok() {
            std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        }
        finish(group);
        PENDING.lock().unwrap().retain(|(pending_group, _)| *pending_group != group);
    }
}

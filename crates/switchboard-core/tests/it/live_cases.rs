//! The live config both shells serve from, against a real file and a real
//! watcher: a file broken at the start is kept and nothing is in force until it is
//! fixed; an edit made here is written, put in force and told once (its write is
//! not reported back as an outside change); an outside change after it is told
//! with its own version, its changed agents' runners evicted.

use std::fs;
use std::sync::mpsc;
use std::time::Duration;

use switchboard_core::config::edit::Edit;
use switchboard_core::config::store::{self, ConfigError, Version};
use switchboard_core::live::{ConfigChange, LiveConfig};
use switchboard_core::Config;

const WAIT: Duration = Duration::from_secs(10);

fn watched(live: &LiveConfig) -> mpsc::Receiver<ConfigChange> {
    let (sender, receiver) = mpsc::channel();
    let sender = std::sync::Mutex::new(sender);
    live.watch(move |change| sender.lock().unwrap().send(change.clone()).unwrap()).unwrap();
    receiver
}

#[test]
fn a_file_broken_at_the_start_is_kept_and_its_fix_is_put_in_force() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    fs::write(&path, b"{ \"agents\": [ }").unwrap();
    let live = LiveConfig::open(&path);
    let snapshot = live.snapshot();
    assert!(matches!(snapshot.error.as_deref(), Some(ConfigError::Syntax { line: 1, .. })), "{:?}", snapshot.error);
    assert_eq!(snapshot.version, None, "nothing is in force");
    assert!(snapshot.config.agents.is_empty());
    assert_eq!(fs::read(&path).unwrap(), b"{ \"agents\": [ }", "the broken file is left as it was");
    let changes = watched(&live);

    fs::write(&path, store::render(&Config::demo_default())).unwrap();
    match changes.recv_timeout(WAIT).expect("the fix is told") {
        ConfigChange::Applied { version, .. } => assert_eq!(version, Version::of(&fs::read(&path).unwrap())),
        ConfigChange::Rejected { error } => panic!("the fix was refused: {error}"),
    }
    let snapshot = live.snapshot();
    assert!(snapshot.error.is_none());
    assert_eq!(snapshot.config.agents, Config::demo_default().agents);
    assert_eq!(live.dispatcher().config().agents, Config::demo_default().agents, "turns run on the fix");
}

#[test]
fn an_edit_here_is_told_once_and_an_outside_change_after_it_with_its_own_version() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let loaded = store::load_or_create(&path).unwrap();
    let live = LiveConfig::from_loaded(&path, &loaded);
    let changes = watched(&live);
    // A runner built for the agent the outside change edits is evicted with it.
    live.dispatcher().runners().get_or_build(loaded.config.agent("expert").unwrap()).unwrap();

    let edit = Edit::DisableTool {
        target: switchboard_core::config::edit::ToolTarget::Global,
        tool_agent: "researcher".into(),
    };
    let snapshot = live.apply(&loaded.version, &edit).unwrap();
    let written = Version::of(&fs::read(&path).unwrap());
    assert_eq!(snapshot.version.as_ref(), Some(&written));
    match changes.recv_timeout(WAIT).expect("the edit is told") {
        ConfigChange::Applied { version, .. } => assert_eq!(version, written),
        ConfigChange::Rejected { error } => panic!("{error}"),
    }
    assert!(live
        .dispatcher()
        .config()
        .agent_tools
        .iter()
        .any(|entry| entry.agent == "researcher" && entry.enabled == Some(false)));

    // An outside change: the next change told is this one (the edit's own write
    // was not reported back), with the agent it changed.
    let mut outside = (*live.dispatcher().config()).clone();
    outside.agent_mut("expert").unwrap().delay_ms = Some(7);
    fs::write(&path, store::render(&outside)).unwrap();
    match changes.recv_timeout(WAIT).expect("the outside change is told") {
        ConfigChange::Applied { version, changed_agents } => {
            assert_eq!(version, Version::of(&fs::read(&path).unwrap()), "not an echo of the edit");
            assert_eq!(changed_agents, ["expert"]);
        }
        ConfigChange::Rejected { error } => panic!("{error}"),
    }
    assert_eq!(live.dispatcher().config().agent("expert").unwrap().delay_ms, Some(7));
    assert!(live.dispatcher().runners().cached_agents().is_empty(), "the changed agent's runner was evicted");
}

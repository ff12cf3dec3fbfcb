//! Hot reload against a real file and a real watcher: valid changes apply with the
//! exact agents to evict, an invalid file keeps the last good config and reports
//! the error, the next valid write recovers, and a save by rename or a double
//! write gives one reload.

use std::fs;
use std::sync::mpsc;
use std::time::Duration;

use switchboard_core::config::store::{self, ConfigError};
use switchboard_core::config::watch::{self, Reload};
use switchboard_core::Config;

const WAIT: Duration = Duration::from_secs(5);
/// Longer than the debounce, so a reload that is coming has come.
const QUIET: Duration = Duration::from_millis(700);

/// A demo config in a temp folder, watched, with its reloads sent to a channel.
fn watched() -> (tempfile::TempDir, std::path::PathBuf, store::Loaded, mpsc::Receiver<Reload>, watch::ConfigWatch) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.json");
    let initial = store::load_or_create(&path).unwrap();
    let (sender, receiver) = mpsc::channel();
    let watch = watch::spawn(&path, &initial, move |reload| sender.send(reload).unwrap()).unwrap();
    (folder, path, initial, receiver, watch)
}

fn render_with(edit: impl FnOnce(&mut Config)) -> Vec<u8> {
    let mut config = Config::demo_default();
    edit(&mut config);
    store::render(&config)
}

#[test]
fn reloads_apply_refuse_and_recover() {
    let (_folder, path, _initial, receiver, _watch) = watched();

    // A valid change to one agent: only that agent is reported.
    fs::write(&path, render_with(|config| config.agent_mut("expert").unwrap().delay_ms = Some(1))).unwrap();
    match receiver.recv_timeout(WAIT).expect("a reload") {
        Reload::Applied { loaded, changed_agents } => {
            assert_eq!(changed_agents, vec!["expert"]);
            assert_eq!(loaded.config.agent("expert").unwrap().delay_ms, Some(1));
        }
        Reload::Rejected { error } => panic!("valid file refused: {error}"),
    }

    // An invalid file: refused with a located error; nothing applied.
    fs::write(&path, b"{ \"agents\": [ }").unwrap();
    match receiver.recv_timeout(WAIT).expect("a report") {
        Reload::Rejected { error: ConfigError::Syntax { line, .. } } => assert_eq!(line, 1),
        other => panic!("expected a syntax refusal, got {other:?}"),
    }

    // The next valid write recovers; the change is measured against the last good config.
    fs::write(
        &path,
        render_with(|config| {
            config.agent_mut("expert").unwrap().delay_ms = Some(1);
            config.agent_tools.retain(|entry| entry.agent != "summariser");
        }),
    )
    .unwrap();
    match receiver.recv_timeout(WAIT).expect("a reload") {
        Reload::Applied { changed_agents, .. } => {
            let mut changed = changed_agents;
            changed.sort();
            assert_eq!(changed, vec!["assistant", "expert", "researcher"]);
        }
        Reload::Rejected { error } => panic!("valid file refused: {error}"),
    }
    assert!(receiver.recv_timeout(QUIET).is_err(), "one write, one reload");
}

#[test]
fn save_by_rename_and_double_writes_give_one_reload() {
    let (folder, path, _initial, receiver, _watch) = watched();

    // An editor that writes a temp file and renames it over the config.
    let temp = folder.path().join("config.json.swp");
    fs::write(&temp, render_with(|config| config.escalation = None)).unwrap();
    fs::rename(&temp, &path).unwrap();
    assert!(matches!(receiver.recv_timeout(WAIT).expect("a reload"), Reload::Applied { .. }));
    assert!(receiver.recv_timeout(QUIET).is_err(), "a rename is one reload");

    // An editor that truncates, then writes twice in quick succession.
    let bytes = render_with(|config| config.primary = Some("researcher".into()));
    fs::write(&path, b"").unwrap();
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    fs::write(&path, &bytes).unwrap();
    match receiver.recv_timeout(WAIT).expect("a reload") {
        Reload::Applied { loaded, .. } => assert_eq!(loaded.config.primary.as_deref(), Some("researcher")),
        Reload::Rejected { error } => panic!("the final content is valid: {error}"),
    }
    assert!(receiver.recv_timeout(QUIET).is_err(), "a burst of writes is one reload");
}

#[test]
fn a_save_noted_by_the_app_is_not_reported_back() {
    let (_folder, path, initial, receiver, watch) = watched();
    let edit = switchboard_core::config::edit::Edit::SetEscalation { agent: None };
    let applied = switchboard_core::config::edit::apply(&path, &initial.version, &edit).unwrap();
    watch.note_saved(&applied.loaded);
    assert!(receiver.recv_timeout(QUIET).is_err(), "our own save is not an outside change");
}

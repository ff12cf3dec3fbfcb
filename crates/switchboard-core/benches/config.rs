//! Config benchmark (issue 3): merging the tool list of every agent of a config
//! with 500 agents and 500 global entries (beside borrowing the global list once
//! per agent, as the merge does), and reloading such a file after an edit that
//! changes every agent's list (read, parse, validate, diff for eviction, which then
//! merges every list twice; beside an untyped parse). Each figure is printed beside
//! a baseline measured in the same run, and against the 16 ms frame budget. Run:
//! `make bench`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use switchboard_core::config::edit::eviction_set;
use switchboard_core::config::store;
use switchboard_core::config::{merge_entries, merged_tools_with, AgentNames};
use switchboard_core::{AgentConfig, AgentToolEntry, Config, Provider};

const AGENTS: usize = 500;
const GLOBALS: usize = 500;
const ROUNDS: usize = 30;

fn big_config() -> Config {
    let mut config = Config::default();
    for index in 0..AGENTS {
        let mut agent = AgentConfig::new(format!("agent-{index:03}"), Provider::OpenAiCompatible);
        agent.url = Some(format!("http://127.0.0.1:{}", 8000 + index));
        agent.model = Some("model".into());
        // Every fifth agent overrides two globals and adds one of its own.
        if index % 5 == 0 {
            let mut disabled = AgentToolEntry::new(format!("agent-{:03}", (index + 1) % AGENTS), "disabled here");
            disabled.enabled = Some(false);
            agent.tools.push(disabled);
            agent.tools.push(AgentToolEntry::new(format!("agent-{:03}", (index + 2) % AGENTS), "a local description"));
        }
        config.agents.push(agent);
    }
    for index in 0..GLOBALS {
        config
            .agent_tools
            .push(AgentToolEntry::new(format!("agent-{index:03}"), format!("Specialist number {index}.")));
    }
    config
}

/// The median of `ROUNDS` timed runs of `work`.
fn median(mut work: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[ROUNDS / 2]
}

fn report(name: &str, measured: Duration, baseline_name: &str, baseline: Duration) {
    let ms = measured.as_secs_f64() * 1e3;
    println!(
        "{name:<44} {ms:>8.3} ms  ({:.2}x {baseline_name}; {:.1}% of a 16 ms frame)",
        measured.as_secs_f64() / baseline.as_secs_f64(),
        ms / 16.0 * 100.0
    );
}

fn main() {
    let config = big_config();
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder.path().join("config.json");
    let bytes = store::render(&config);
    std::fs::write(&path, &bytes).expect("write config");
    println!(
        "config: {AGENTS} agents, {GLOBALS} global entries, {} KiB on disk; median of {ROUNDS} runs",
        bytes.len() / 1024
    );

    // Baseline for the merge: borrowing the global list once per agent into a list
    // of references, as the merge does (what any merge must at least touch).
    let copy = median(|| {
        for _ in &config.agents {
            black_box(config.agent_tools.iter().collect::<Vec<_>>());
        }
    });
    let merge = median(|| {
        let names = AgentNames::of(&config);
        for agent in &config.agents {
            black_box(merge_entries(&config, &names, &agent.name));
        }
    });
    let owned = median(|| {
        let names = AgentNames::of(&config);
        for agent in &config.agents {
            black_box(merged_tools_with(&config, &names, &agent.name));
        }
    });
    println!("{:<44} {:>8.3} ms", "baseline: borrow agent_tools once per agent", copy.as_secs_f64() * 1e3);
    report("merge for every agent (the merge itself)", merge, "the borrow baseline", copy);
    report("merge + owned wire rows for every agent", owned, "the borrow baseline", copy);

    // The reload measured is one after a real edit: the file on disk has one global
    // entry disabled, so the eviction diff merges every agent's list twice.
    let mut edited = config.clone();
    edited.agent_tools[0].enabled = Some(false);
    std::fs::write(&path, store::render(&edited)).expect("write the edited config");
    // Baseline for the reload: reading the file and parsing it as untyped JSON.
    let untyped = median(|| {
        let read = std::fs::read(&path).unwrap();
        black_box(serde_json::from_slice::<serde_json::Value>(&read).unwrap());
    });
    let reload = median(|| {
        let loaded = store::load(&path).unwrap();
        let evicted = eviction_set(&config, &loaded.config);
        assert!(!evicted.is_empty(), "the edit changes lists, so the diff merges");
        black_box(evicted);
    });
    println!("{:<44} {:>8.3} ms", "baseline: read + parse as untyped JSON", untyped.as_secs_f64() * 1e3);
    report("reload after an edit: read, parse, validate, diff", reload, "the untyped parse", untyped);
}

//! `switchboard report`: the delegation report over the data folder's sessions
//! (the desktop app's too), for a date range: per tool-agent, its calls by how
//! they ended, median and p95 time, tokens and cost; per primary, the multiple of
//! a turn that delegated over one that did not. A table, JSON, or CSV (one row per
//! tool-agent, for a spreadsheet).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use switchboard_core::sessions::report::{day_start_ms, DelegationReport, ReportRange};
use switchboard_core::sessions::ChatSessions;

use crate::terminal::printable;
use crate::{Failure, ReportArgs};

pub(crate) fn report(data_dir: &Path, arguments: ReportArgs) -> Result<ExitCode, Failure> {
    let day = |flag: &str, value: Option<&str>| -> Result<Option<u64>, Failure> {
        value
            .map(|value| {
                day_start_ms(value).ok_or_else(|| Failure {
                    code: 2,
                    message: format!("{flag} takes a date as YYYY-MM-DD (UTC); {value:?} is not one"),
                })
            })
            .transpose()
    };
    let since_ms = day("--since", arguments.since.as_deref())?;
    // --until names the last day included: the range ends when the next one starts.
    let until_ms = day("--until", arguments.until.as_deref())?.map(|start| start + 86_400_000);
    let chats = ChatSessions::open(data_dir.join("sessions"))?;
    let report = chats.report(ReportRange { since_ms, until_ms })?;
    if arguments.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serializes"));
    } else if arguments.csv {
        print!("{}", csv(&report));
    } else {
        print!("{}", table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn or_dash(value: Option<u64>) -> String {
    value.map(|value| value.to_string()).unwrap_or_else(|| "-".into())
}

fn table(report: &DelegationReport) -> String {
    let mut text = format!("{} sessions, {} turns\n", report.sessions, report.turns);
    if report.agents.is_empty() {
        text.push_str("No tool-agent calls in this range.\n");
    } else {
        let _ = writeln!(
            text,
            "\n{:<20} {:>6} {:>5} {:>6} {:>7} {:>8} {:>10} {:>9} {:>9} {:>10} {:>10}",
            "TOOL-AGENT",
            "CALLS",
            "OK",
            "ERROR",
            "DENIED",
            "LIMITED",
            "CANCELLED",
            "MEDIAN_MS",
            "P95_MS",
            "TOKENS",
            "COST"
        );
        for agent in &report.agents {
            let _ = writeln!(
                text,
                "{:<20} {:>6} {:>5} {:>6} {:>7} {:>8} {:>10} {:>9} {:>9} {:>10} {:>10}",
                printable(&agent.agent),
                agent.calls,
                agent.ok,
                agent.error,
                agent.denied,
                agent.limited,
                agent.cancelled,
                or_dash(agent.median_ms),
                or_dash(agent.p95_ms),
                agent.subtree_tokens,
                agent.subtree_cost.map(|cost| format!("{cost:.4}")).unwrap_or_else(|| "-".into())
            );
        }
    }
    if !report.primaries.is_empty() {
        text.push_str("\nDoes delegation pay? Per primary, a turn that delegated against one that did not:\n");
        for primary in &report.primaries {
            let times = |value: Option<f64>| value.map(|value| format!("{value:.1}×")).unwrap_or_else(|| "-".into());
            let _ = writeln!(
                text,
                "  {}: {} delegating turns, {} plain; tokens {}, cost {}",
                printable(&primary.primary),
                primary.delegating_turns,
                primary.plain_turns,
                times(primary.token_multiple),
                times(primary.cost_multiple)
            );
        }
    }
    if report.skipped_lines > 0 {
        let _ = writeln!(text, "\n{} damaged log lines were skipped.", report.skipped_lines);
    }
    text
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

fn csv(report: &DelegationReport) -> String {
    let mut text = String::from(
        "agent,calls,ok,error,denied,limited,cancelled,median_ms,p95_ms,own_tokens,subtree_tokens,own_cost,subtree_cost\n",
    );
    let blank = |value: Option<u64>| value.map(|value| value.to_string()).unwrap_or_default();
    for agent in &report.agents {
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&agent.agent),
            agent.calls,
            agent.ok,
            agent.error,
            agent.denied,
            agent.limited,
            agent.cancelled,
            blank(agent.median_ms),
            blank(agent.p95_ms),
            agent.own_tokens,
            agent.subtree_tokens,
            agent.own_cost.map(|cost| cost.to_string()).unwrap_or_default(),
            agent.subtree_cost.map(|cost| cost.to_string()).unwrap_or_default()
        );
    }
    text
}

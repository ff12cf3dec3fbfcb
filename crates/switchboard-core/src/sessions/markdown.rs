//! A session as Markdown, for a person to keep or share: its title, then each turn
//! that still counts (a taken-back one is left out) as the message, who answered
//! and the answer, with the tool-agent calls it made as a nested list (agent,
//! status, tokens of its subtree, time) and the messages each call was steered
//! with (taken or not, and why). Pure: it reads a loaded log. Text from the
//! user and from models goes in as it is (it is Markdown already); names and
//! statuses are escaped so they cannot start a heading or a list of their own.

use std::collections::HashMap;
use std::fmt::Write;

use super::store::{SessionLog, SessionRecord};
use crate::event::{CallEvent, EventKind};

/// One call as the list shows it.
struct Call {
    agent: String,
    depth: u32,
    started_ms: u64,
    finished: Option<(String, Option<u64>, u64)>,
    /// The messages sent into it, as the list says them.
    steers: Vec<String>,
}

/// `log` as a Markdown document.
pub fn render(log: &SessionLog) -> String {
    let retracted = log.taken_back();
    let mut title = log.id.clone();
    let mut calls: HashMap<&str, Vec<(String, Call)>> = HashMap::new();
    // The root call's text, every step of it, as the chat showed it.
    let mut root_text: HashMap<&str, String> = HashMap::new();
    for record in &log.records {
        match record {
            SessionRecord::Created { title: named, .. } | SessionRecord::Renamed { title: named } => {
                title = named.clone()
            }
            SessionRecord::Event { turn_id, event } => {
                if let (None, EventKind::TextDelta { text }) = (&event.parent_id, &event.kind) {
                    root_text.entry(turn_id.as_str()).or_default().push_str(text);
                }
                absorb(calls.entry(turn_id.as_str()).or_default(), event)
            }
            _ => {}
        }
    }
    let mut out = format!("# {}\n", plain(&title));
    let mut messages: HashMap<&str, (&str, Option<&str>)> = HashMap::new();
    for record in &log.records {
        match record {
            SessionRecord::UserMessage { turn_id, text, agent, .. } if !retracted.contains(turn_id.as_str()) => {
                messages.insert(turn_id, (text, agent.as_deref()));
            }
            SessionRecord::TurnEnded { turn_id, status, text, answered_by }
                if !retracted.contains(turn_id.as_str()) =>
            {
                let (message, to) = messages.get(turn_id.as_str()).copied().unwrap_or(("", None));
                let to = to.map(|agent| format!(" (to {})", plain(agent))).unwrap_or_default();
                let _ = write!(out, "\n## You{to}\n\n{}\n\n## {}", message.trim(), plain(answered_by));
                if status.as_str() != "ok" {
                    let _ = write!(out, " ({})", status.as_str());
                }
                // The turn's text is its last step's; what the primary said before its
                // tool calls is kept too (an escalated turn's answer is another
                // agent's, and stands alone).
                let text = match root_text.get(turn_id.as_str()) {
                    Some(streamed) if streamed.trim_end().ends_with(text.trim()) => streamed.as_str(),
                    _ => text.as_str(),
                };
                let _ = write!(out, "\n\n{}\n", if text.trim().is_empty() { "*(no answer)*" } else { text.trim() });
                let turn_calls = calls.get(turn_id.as_str()).map(Vec::as_slice).unwrap_or_default();
                let root_steers: Vec<&String> =
                    turn_calls.iter().filter(|(_, call)| call.depth == 0).flat_map(|(_, call)| &call.steers).collect();
                if !root_steers.is_empty() {
                    out.push_str("\nSteered:\n\n");
                    for steer in root_steers {
                        let _ = writeln!(out, "- {steer}");
                    }
                }
                let delegated: Vec<&(String, Call)> = turn_calls.iter().filter(|(_, call)| call.depth > 0).collect();
                if !delegated.is_empty() {
                    out.push_str("\nCalls:\n\n");
                    for (_, call) in delegated {
                        let indent = "  ".repeat(call.depth.saturating_sub(1) as usize);
                        let detail = match &call.finished {
                            Some((status, tokens, ended_ms)) => {
                                let tokens = tokens.map(|tokens| format!(", {tokens} tokens")).unwrap_or_default();
                                let secs = ended_ms.saturating_sub(call.started_ms) as f64 / 1000.0;
                                format!("{status}{tokens}, {secs:.1} s")
                            }
                            None => "did not finish".into(),
                        };
                        let _ = writeln!(out, "{indent}- {}: {detail}", plain(&call.agent));
                        for steer in &call.steers {
                            let _ = writeln!(out, "{indent}  - {steer}");
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn absorb(calls: &mut Vec<(String, Call)>, event: &CallEvent) {
    match &event.kind {
        EventKind::CallStarted { .. } => calls.push((
            event.call_id.clone(),
            Call {
                agent: event.agent.clone(),
                depth: event.depth,
                started_ms: event.ts_ms,
                finished: None,
                steers: vec![],
            },
        )),
        EventKind::CallSteered { message, by, taken, why } => {
            if let Some((_, call)) = calls.iter_mut().find(|(id, _)| *id == event.call_id) {
                let outcome = match (taken, why) {
                    (true, _) => "taken".to_string(),
                    (false, Some(why)) => format!("not taken: {}", plain(why)),
                    (false, None) => "not taken: the call ended first".to_string(),
                };
                call.steers.push(format!("steered by the {}: “{}” ({outcome})", plain(by), plain(message)));
            }
        }
        EventKind::CallFinished { status, usage_total, usage, .. } => {
            if let Some((_, call)) = calls.iter_mut().find(|(id, _)| *id == event.call_id) {
                let tokens = usage_total.as_ref().or(usage.as_ref()).map(|usage| usage.total_tokens);
                call.finished = Some((status.as_str().to_string(), tokens, event.ts_ms));
            }
        }
        _ => {}
    }
}

/// A name or title on one line, with the characters that would make it Markdown escaped.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '<' | '>' | '|' => {
                out.push('\\');
                out.push(character);
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_records::{event, finished, started};
    use super::*;
    use crate::event::CallStatus;

    fn steered(message: &str, taken: bool, why: Option<&str>) -> EventKind {
        EventKind::CallSteered { message: message.into(), by: "user".into(), taken, why: why.map(str::to_string) }
    }

    #[test]
    fn every_step_of_the_primarys_answer_is_exported_and_an_escalated_answer_alone() {
        let text = |text: &str| EventKind::TextDelta { text: text.into() };
        let turn = |turn_id: &str, answer: &str, by: &str| SessionRecord::TurnEnded {
            turn_id: turn_id.into(),
            status: CallStatus::Ok,
            text: answer.into(),
            answered_by: by.into(),
        };
        let mut records = vec![
            SessionRecord::UserMessage {
                turn_id: "t1".into(),
                text: "Go".into(),
                agent: None,
                handoff: None,
                process: None,
                ts_ms: 1,
            },
            event("c1", None, "boss", 0, 1_000, started()),
            event("c1", None, "boss", 0, 1_001, text("Step one: ask the scout.\n\n")),
            event("c2", Some("c1"), "scout", 1, 1_100, text("scout's own words")),
            event("c1", None, "boss", 0, 1_200, text("Step two: ")),
            event("c1", None, "boss", 0, 1_201, text("done.")),
            turn("t1", "Step two: done.", "boss"),
        ];
        let escalated = [
            SessionRecord::UserMessage {
                turn_id: "t2".into(),
                text: "Hard".into(),
                agent: None,
                handoff: None,
                process: None,
                ts_ms: 2,
            },
            event("c9", None, "boss", 0, 2_000, text("Handing over.")),
            turn("t2", "The expert's answer.", "expert"),
        ];
        for record in escalated {
            records.push(match record {
                SessionRecord::Event { event, .. } => SessionRecord::Event { turn_id: "t2".into(), event },
                other => other,
            });
        }
        let log = SessionLog { id: "s".into(), records, skipped_lines: 0, damaged_lines: vec![], newer_records: 0 };
        let exported = render(&log);
        assert!(exported.contains("Step one: ask the scout.\n\nStep two: done.\n"), "{exported}");
        assert!(!exported.contains("scout's own words"), "{exported}");
        assert!(exported.contains("## expert\n\nThe expert's answer.\n"), "{exported}");
    }

    #[test]
    fn a_delegating_turn_lists_its_calls_nested_with_their_steers_and_names_cannot_become_markdown() {
        let log = SessionLog {
            id: "s1".into(),
            records: vec![
                SessionRecord::Created { title: "# Otters\nand *rivers*".into(), created_ms: 0 },
                SessionRecord::UserMessage {
                    turn_id: "t1".into(),
                    text: "Find **facts**".into(),
                    agent: Some("boss".into()),
                    handoff: Some(true),
                    process: None,
                    ts_ms: 1,
                },
                event("c1", None, "boss", 0, 1_000, started()),
                event("c2", Some("c1"), "scout", 1, 1_100, started()),
                event("c3", Some("c2"), "deep_diver", 2, 1_200, started()),
                event("c3", Some("c2"), "deep_diver", 2, 2_000, steered("stop *now*\nplease", true, None)),
                event("c3", Some("c2"), "deep_diver", 2, 2_700, finished(CallStatus::Ok, 40)),
                event("c2", Some("c1"), "scout", 1, 2_800, steered("too late", false, None)),
                event("c1", None, "boss", 0, 3_400, steered("wrap up", false, Some("the task had ended"))),
                event("c2", Some("c1"), "scout", 1, 3_100, finished(CallStatus::Denied, 0)),
                event("c1", None, "boss", 0, 3_500, finished(CallStatus::Ok, 90)),
                SessionRecord::TurnEnded {
                    turn_id: "t1".into(),
                    status: CallStatus::Ok,
                    text: "Otters *hold hands*.".into(),
                    answered_by: "boss".into(),
                },
            ],
            skipped_lines: 0,
            damaged_lines: vec![],
            newer_records: 0,
        };
        expect_test::expect![[r#"
            # \# Otters and \*rivers\*

            ## You (to boss)

            Find **facts**

            ## boss

            Otters *hold hands*.

            Steered:

            - steered by the user: “wrap up” (not taken: the task had ended)

            Calls:

            - scout: denied, 0 tokens, 2.0 s
              - steered by the user: “too late” (not taken: the call ended first)
              - deep\_diver: ok, 40 tokens, 1.5 s
                - steered by the user: “stop \*now\* please” (taken)
        "#]]
        .assert_eq(&render(&log));
    }
}

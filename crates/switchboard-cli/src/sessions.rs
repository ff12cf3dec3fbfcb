//! `switchboard sessions`: the chat sessions of the data folder (the desktop app's
//! too) listed, shown as a conversation, and a turn's events exported.

use std::path::Path;
use std::process::ExitCode;

use switchboard_core::sessions::{ChatSessions, SessionRecord};

use crate::terminal::printable;
use crate::{Failure, SessionsCommand};

pub(crate) fn sessions_command(config: &Path, data_dir: &Path, command: SessionsCommand) -> Result<ExitCode, Failure> {
    let chats = ChatSessions::open(data_dir.join("sessions"))?;
    match command {
        SessionsCommand::Rerun(arguments) => return crate::rerun::rerun(config, data_dir, arguments),
        SessionsCommand::Resume(crate::ResumeArgs { session, turn, approve, events }) => {
            let asked = crate::ask::Asked::Resume { of_turn: turn };
            let arguments = crate::ask::TurnArgs { approve, events, session: Some(session), asked };
            return crate::ask::run(config, data_dir, arguments);
        }
        SessionsCommand::List { json } => {
            let list = chats.list()?;
            if json {
                println!("{}", serde_json::to_string(&list).expect("summaries serialize"));
                return Ok(ExitCode::SUCCESS);
            }
            let width = list.iter().map(|summary| summary.id.len()).max().unwrap_or(2).max(2);
            println!("{:<width$}  {:>5}  TITLE", "ID", "TURNS");
            for summary in list {
                println!("{:<width$}  {:>5}  {}", summary.id, summary.turns, summary.title);
            }
        }
        SessionsCommand::Show { session, json } => {
            let log = chats.load(&session)?;
            // A turn whose process died before it ended, and what it had done.
            let interrupted = log.interrupted();
            if json {
                let mut value = serde_json::to_value(&log).expect("logs serialize");
                value["interrupted"] = serde_json::to_value(&interrupted).expect("turns serialize");
                println!("{value}");
                return Ok(ExitCode::SUCCESS);
            }
            for record in &log.records {
                match record {
                    SessionRecord::Created { title, .. } => println!("# {}", printable(title)),
                    SessionRecord::Renamed { title } => println!("# renamed: {}", printable(title)),
                    SessionRecord::UserMessage { turn_id, text, agent, .. } => {
                        let to = agent.as_deref().map(|agent| format!(" (to @{agent})")).unwrap_or_default();
                        println!("\n[{turn_id}] you{to}: {}", printable(text));
                        if let Some(turn) = interrupted.iter().find(|turn| turn.turn_id == *turn_id) {
                            let list = |agents: &[String]| {
                                if agents.is_empty() {
                                    "nothing".to_string()
                                } else {
                                    printable(&agents.join(", ")).into_owned()
                                }
                            };
                            println!(
                                "[interrupted] the process running this turn ended before it did; finished: {}; was running: {}",
                                list(&turn.finished),
                                list(&turn.running)
                            );
                            for waiting in &turn.waiting {
                                let by = waiting.asked_by.as_deref().unwrap_or("the user");
                                println!(
                                    "[interrupted] {} was waiting for approval (asked by {}, depth {}): {} (asked again on resume)",
                                    printable(&waiting.agent),
                                    printable(by),
                                    waiting.depth,
                                    printable(&waiting.request)
                                );
                            }
                        }
                    }
                    SessionRecord::TurnEnded { status, text, answered_by, .. } => {
                        println!("[{}] {answered_by}: {}", status.as_str(), printable(text));
                    }
                    SessionRecord::Retracted { turn_id } => println!("({turn_id} was taken back)"),
                    SessionRecord::Rerun { turn_id, of_turn, of_call } => {
                        println!("({turn_id} runs call {of_call} of {of_turn} again)")
                    }
                    SessionRecord::Resumed { turn_id, of_turn } => {
                        println!("({turn_id} resumes interrupted turn {of_turn}; its finished calls are not run again)")
                    }
                    SessionRecord::CommandNote { command, text, .. } => {
                        println!("\n{}: {}", printable(command), printable(text))
                    }
                    SessionRecord::Event { .. } => {}
                }
            }
            if log.skipped_lines > 0 {
                let named: Vec<String> = log.damaged_lines.iter().map(u32::to_string).collect();
                let more = if log.skipped_lines as usize > named.len() { " and more" } else { "" };
                eprintln!(
                    "switchboard: {} damaged line(s) of the log were skipped (line {}{more})",
                    log.skipped_lines,
                    named.join(", ")
                );
            }
            if log.newer_records > 0 {
                eprintln!(
                    "switchboard: {} record(s) of a newer version of Switchboard were skipped",
                    log.newer_records
                );
            }
        }
        SessionsCommand::Export { session, markdown: true, .. } => {
            // Models' and agents' words: shown escaped, never obeyed by the terminal.
            print!("{}", printable(&switchboard_core::sessions::markdown::render(&chats.load(&session)?)));
        }
        SessionsCommand::Export { session, turn, otlp: true, .. } => {
            let config = crate::load(config)?.config;
            return crate::traces::export_session(&config, &chats, &session, turn.as_deref());
        }
        SessionsCommand::Export { session, turn, otlp: false, .. } => {
            let turn = match turn {
                Some(turn) => turn,
                None => chats
                    .load(&session)?
                    .records
                    .iter()
                    .rev()
                    .find_map(|record| match record {
                        SessionRecord::UserMessage { turn_id, .. } => Some(turn_id.clone()),
                        _ => None,
                    })
                    .ok_or_else(|| Failure { code: 1, message: format!("session {session:?} has no turns") })?,
            };
            let events = chats.turn_events(&session, &turn)?;
            println!("{}", serde_json::to_string_pretty(&events).expect("events serialize"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

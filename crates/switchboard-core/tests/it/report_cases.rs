//! The delegation report over real turns logged by `ChatSessions`: each
//! tool-agent's calls by how they ended, their time and tokens, and the multiple
//! of a turn that delegated over one that did not; a date range keeps to its span.

use switchboard_core::config::{Approval, Prices};
use switchboard_core::sessions::report::{day_start_ms, utc_day, ReportRange};
use switchboard_core::sessions::ChatSessions;
use switchboard_core::{ApprovalPolicy, Dispatcher};

use crate::support::{agent, call, config, entry, on_events, session_turn as turn, Scripted, Step};

#[tokio::test]
async fn the_report_counts_each_delegation_by_its_end_and_the_multiple_of_delegating_turns() {
    let folder = tempfile::tempdir().unwrap();
    let chats = ChatSessions::open(folder.path()).unwrap();
    let mut boss = agent("boss");
    boss.prices = Some(Prices { input_per_million: 1_000.0, output_per_million: 2_000.0 });
    let mut careful = agent("careful");
    careful.approval = Some(Approval::Deny);
    let config = config(
        vec![boss, agent("worker"), agent("flaky"), careful],
        vec![entry("worker", "Works."), entry("flaky", "Fails."), entry("careful", "Never runs.")],
    );
    let dispatcher = Dispatcher::new(config);
    let three = vec![call("agent_worker", "work"), call("agent_flaky", "try"), call("agent_careful", "please")];
    dispatcher.runners().insert(
        "boss",
        Scripted::new(vec![Step::Call(three), Step::Say("delegated"), Step::Say("alone"), Step::Say("again alone")]),
    );
    dispatcher.runners().insert("worker", Scripted::new(vec![Step::Say("worked")]));
    dispatcher.runners().insert("flaky", Scripted::new(vec![Step::Fail("down")]));

    let first = chats.create("Delegating").unwrap();
    let second = chats.create("Plain").unwrap();
    let auto = ApprovalPolicy::ApproveAll;
    chats.run_turn(&dispatcher, turn(&first.id, "t1", "go"), auto, on_events(|_| {})).await.unwrap();
    chats.run_turn(&dispatcher, turn(&second.id, "t2", "alone"), auto, on_events(|_| {})).await.unwrap();
    chats.run_turn(&dispatcher, turn(&second.id, "t3", "alone again"), auto, on_events(|_| {})).await.unwrap();

    let report = chats.report(ReportRange::default()).unwrap();
    assert_eq!((report.sessions, report.turns), (2, 3));
    let by_agent = |name: &str| report.agents.iter().find(|figures| figures.agent == name).unwrap().clone();
    let (worker, flaky, careful) = (by_agent("worker"), by_agent("flaky"), by_agent("careful"));
    assert_eq!((worker.calls, worker.ok, worker.own_tokens, worker.subtree_tokens), (1, 1, 15, 15));
    assert_eq!((flaky.calls, flaky.error, flaky.own_tokens), (1, 1, 0));
    assert_eq!((careful.calls, careful.denied), (1, 1));
    assert!(worker.median_ms.is_some() && worker.p95_ms >= worker.median_ms);
    assert!(report.agents.iter().all(|figures| figures.agent != "boss"), "the primary is not a tool-agent");
    assert_eq!(worker.subtree_cost, None, "the worker has no prices: unpriced, not free");

    // boss: one turn that delegated (its two steps and the worker's: 45 tokens)
    // against two alone (15 each): three times the tokens.
    let boss = &report.primaries[0];
    assert_eq!((boss.primary.as_str(), boss.delegating_turns, boss.plain_turns), ("boss", 1, 2));
    assert_eq!((boss.delegating_tokens_mean, boss.plain_tokens_mean), (Some(45.0), Some(15.0)));
    assert_eq!(boss.token_multiple, Some(3.0));
    // Its own two steps cost 2 × (10 × 1,000 + 5 × 2,000) / 1e6 = 0.04; alone, 0.02.
    let cost_multiple = boss.cost_multiple.unwrap();
    assert!((cost_multiple - 2.0).abs() < 1e-9, "{cost_multiple}");

    let today = utc_day(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64);
    assert!(report.days.iter().all(|day| day.day == today));
    assert_eq!(report.days.iter().map(|day| day.calls).sum::<u32>(), 3);

    // A range that ends before today holds nothing; one from today holds it all.
    let today_start = day_start_ms(&today).unwrap();
    let before = chats.report(ReportRange { since_ms: None, until_ms: Some(today_start) }).unwrap();
    assert_eq!((before.turns, before.agents.len()), (0, 0));
    let from_today = chats.report(ReportRange { since_ms: Some(today_start), until_ms: None }).unwrap();
    assert_eq!(from_today.turns, 3);

    // A turn taken back (Retry, Edit) is gone from the session list, and from the report.
    chats.retract_turn(&second.id, "t3").unwrap();
    let after = chats.report(ReportRange::default()).unwrap();
    assert_eq!((after.turns, after.primaries[0].plain_turns), (2, 1));
    assert_eq!(chats.list().unwrap().iter().map(|session| session.turns).sum::<u32>(), after.turns);
}

//! The core's one integration-test binary (linked once): each `*_cases` module is a
//! suite; `support` (with `support/peer.rs` and `support/world.rs`) and `loopback`
//! are what the suites share.

mod anthropic_cases;
mod architecture_cases;
mod chat_cases;
mod claude_caller_cases;
mod cli_agent_cases;
mod dispatch_cases;
mod limits_cases;
mod live_cases;
mod local_runner_cases;
#[path = "../../benches/support/loopback.rs"]
mod loopback;
mod merge_cases;
mod offer_cases;
mod peer_cases;
mod policy_cases;
mod real_agent_cases;
mod report_cases;
mod resume_cases;
mod schema_cases;
mod sessions_cases;
mod setup_cases;
mod steer_cases;
mod store_cases;
mod subprocess_cases;
mod support;
mod validate_cases;
mod watch_cases;

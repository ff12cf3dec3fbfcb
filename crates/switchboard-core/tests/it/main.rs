//! The core's one integration-test binary (linked once); each module is a suite.

mod architecture;
mod chat_cases;
mod claude_caller;
mod cli_agents;
mod dispatch_cases;
mod limits_cases;
mod live_cases;
mod local_runner_cases;
#[path = "../../benches/support/loopback.rs"]
mod loopback;
mod merge_cases;
mod offer_cases;
mod peers;
mod policy_cases;
mod real_agents;
mod schema_cases;
mod sessions_cases;
mod setup_cases;
mod store_cases;
mod subprocess_cases;
mod support;
mod validate_cases;
mod watch_cases;

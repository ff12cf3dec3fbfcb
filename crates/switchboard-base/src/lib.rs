//! The words every other crate speaks: the config model (its merge, validation,
//! edits and file watch), the contract between the dispatcher and a runner, the
//! one event enum of a turn, the fence around untrusted output, the keyring, and
//! the clock and randomness tests replace. No network client and no process
//! handling: `switchboard-runners` and `switchboard-core` build on this floor.

pub mod config;
pub mod contract;
pub mod event;
pub mod fence;
pub mod keys;
pub mod sources;

pub use config::{AgentConfig, AgentToolEntry, Approval, Config, Limits, Provider};

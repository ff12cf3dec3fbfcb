//! `CallSpec`: everything one call needs to run, the arguments every room of the
//! dispatcher passes along, in one struct (a leaf: it imports no other room but
//! the turn's `Header`).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{AgentConfig, Limits};
use crate::contract::Message;
use crate::event::{ApprovalLimits, CallRole};
use crate::tools::Standing;

use super::turn::Header;

/// Everything one call needs to run.
pub(super) struct CallSpec {
    pub header: Header,
    pub agent: AgentConfig,
    pub role: CallRole,
    pub standing: Standing,
    pub tool_name: Option<String>,
    pub input: Option<Value>,
    pub messages: Vec<Message>,
    /// Agents above this call on the path from the root.
    pub path: Vec<String>,
    pub cancel: CancellationToken,
    /// Set when the call must be approved before it runs.
    pub approval: Option<ApprovalLimits>,
    pub limits: Limits,
    /// A model chosen by the caller among the agent's `allowed_models`.
    pub model: Option<String>,
    /// For a persistent delegate: the caller whose session keeps its conversation.
    pub keep_conversation: Option<String>,
    /// When the call is narrowed (`limits.narrow_delegation`): the tool-agents its
    /// caller could call, the only ones it may be offered.
    pub reach: Option<Vec<String>>,
    /// When the call is narrowed: the approval each agent in reach may be called
    /// under at most (`Admitted::floor`).
    pub floor: Option<std::collections::BTreeMap<String, crate::config::Approval>>,
    /// A resumed call whose agent's server kept its task running: the task's id,
    /// and the call of the interrupted turn that started it (`reuse::Kept`).
    pub remote_task: Option<super::reuse::ReusedCall>,
}

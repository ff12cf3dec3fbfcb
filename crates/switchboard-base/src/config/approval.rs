//! Which approval a call gets, and which setting decided it: the entry's own,
//! else the called agent's, else `ask`; and the same answer for every entry and
//! agent at once, for the views that show it (so none decides it again).

use serde::Serialize;
use specta::Type;

use super::{AgentToolEntry, Approval, Config};

/// Which setting decided a call's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalFrom {
    /// The tool entry's own `approval`.
    Entry,
    /// The called agent's `approval`.
    Agent,
    /// Neither sets one: `ask`.
    Default,
}

/// The approval in force for one entry: of the global list (`owner` none) or of an agent's own list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct EntryApproval {
    pub owner: Option<String>,
    pub tool_agent: String,
    pub approval: Approval,
    pub from: ApprovalFrom,
}

/// What a call of `agent` gets through an entry that sets no approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct AgentApproval {
    pub agent: String,
    pub approval: Approval,
    pub from: ApprovalFrom,
}

/// Every entry's approval in force, and each agent's for entries that set none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type, Default)]
pub struct EffectiveApprovals {
    pub entries: Vec<EntryApproval>,
    pub agents: Vec<AgentApproval>,
}

impl Config {
    /// Whether a call through `entry` needs approval: the entry's own setting, else
    /// the called agent's, else `ask`.
    pub fn approval_of(&self, entry: &AgentToolEntry) -> Approval {
        self.approval_and_source(entry).0
    }

    /// As `approval_of`, with which setting decided it.
    pub fn approval_and_source(&self, entry: &AgentToolEntry) -> (Approval, ApprovalFrom) {
        match entry.approval {
            Some(approval) => (approval, ApprovalFrom::Entry),
            None => self.agent_approval(&entry.agent),
        }
    }

    /// What a call of `agent` gets through an entry that sets no approval of its own.
    pub fn agent_approval(&self, agent: &str) -> (Approval, ApprovalFrom) {
        match self.agent(agent).and_then(|agent| agent.approval) {
            Some(approval) => (approval, ApprovalFrom::Agent),
            None => (Approval::default(), ApprovalFrom::Default),
        }
    }

    /// The approval in force for every entry (the global list's, then each agent's
    /// own) and for each agent called through an entry that sets none, so that no
    /// view has to decide it again.
    pub fn effective_approvals(&self) -> EffectiveApprovals {
        let entry = |owner: Option<&str>, entry: &AgentToolEntry| {
            let (approval, from) = self.approval_and_source(entry);
            EntryApproval { owner: owner.map(str::to_owned), tool_agent: entry.agent.clone(), approval, from }
        };
        let mut entries: Vec<EntryApproval> = self.agent_tools.iter().map(|tool| entry(None, tool)).collect();
        for agent in &self.agents {
            entries.extend(agent.tools.iter().map(|tool| entry(Some(&agent.name), tool)));
        }
        let agents = self
            .agents
            .iter()
            .map(|agent| {
                let (approval, from) = self.agent_approval(&agent.name);
                AgentApproval { agent: agent.name.clone(), approval, from }
            })
            .collect();
        EffectiveApprovals { entries, agents }
    }
}

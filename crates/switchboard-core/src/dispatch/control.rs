//! Steering a turn from outside it: cancel the turn or any call, answer approval
//! requests; and the session a turn belongs to, which keeps "approve always"
//! answers and persistent delegates' conversations. (Usage per agent is not kept
//! here: it is derived from the events, which the session log keeps.)

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::contract::{AnswerSlot, Message, SteerInbox, SteerMessage};
use crate::event::{ApprovalDecision, Steering};

/// The longest message a call can be steered with, in bytes.
pub const MAX_STEER_BYTES: usize = 16 * 1024;

/// Why `steer_call` did not send a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SteerRefusal {
    /// No call of that id is running (it ended, or never was).
    NotRunning,
    /// The call runs, but cannot take a message, and why.
    NotSteerable(String),
    /// The message is empty, or longer than `MAX_STEER_BYTES`.
    BadMessage(String),
}

impl std::fmt::Display for SteerRefusal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SteerRefusal::NotRunning => formatter.write_str("that call is not running"),
            SteerRefusal::NotSteerable(why) => write!(formatter, "that call cannot be steered: {why}"),
            SteerRefusal::BadMessage(why) => formatter.write_str(why),
        }
    }
}

/// Where a running call's steering goes: its inbox, or why it has none.
#[derive(Debug, Clone)]
enum SteerPort {
    Inbox(SteerInbox),
    Not(String),
}

/// How a turn answers approval requests: the one name for it in the core, the
/// MCP server and the CLI (`--approve ask|all|none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Wait for `TurnControl::resolve_approval` (the app, an interactive terminal,
    /// an MCP client through elicitation).
    #[default]
    Ask,
    /// Approve every request (`--approve all`); still reported.
    ApproveAll,
    /// Deny every request (`--approve none`); still reported.
    DenyAll,
}

impl ApprovalPolicy {
    /// The word a command line takes for it: `ask`, `all` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::ApproveAll => "all",
            ApprovalPolicy::DenyAll => "none",
        }
    }
}

impl std::str::FromStr for ApprovalPolicy {
    type Err = String;

    fn from_str(word: &str) -> Result<ApprovalPolicy, String> {
        [ApprovalPolicy::Ask, ApprovalPolicy::ApproveAll, ApprovalPolicy::DenyAll]
            .into_iter()
            .find(|policy| policy.as_str() == word)
            .ok_or_else(|| format!("{word:?}: one of ask, all, none"))
    }
}

/// What a chat session keeps across its turns. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct Session(Arc<Mutex<SessionState>>);

#[derive(Debug, Default)]
struct SessionState {
    approved: HashSet<String>,
    /// Persistent delegates' conversations, by (caller, delegate).
    conversations: HashMap<(String, String), Vec<Message>>,
}

impl Session {
    /// Whether `agent` was approved "always" in this session.
    pub fn is_approved(&self, agent: &str) -> bool {
        self.0.lock().unwrap().approved.contains(agent)
    }

    /// Records an "approve always" answer (also used to restore a session's answers
    /// from its log after a restart).
    pub fn approve(&self, agent: &str) {
        self.0.lock().unwrap().approved.insert(agent.to_string());
    }

    pub(crate) fn conversation(&self, caller: &str, delegate: &str) -> Vec<Message> {
        let state = self.0.lock().unwrap();
        state.conversations.get(&(caller.to_string(), delegate.to_string())).cloned().unwrap_or_default()
    }

    pub(crate) fn keep_conversation(&self, caller: &str, delegate: &str, messages: Vec<Message>) {
        self.0.lock().unwrap().conversations.insert((caller.to_string(), delegate.to_string()), messages);
    }
}

/// Where a waiting approval's answer goes, with who gave it.
pub(crate) type ApprovalSlot = oneshot::Sender<(ApprovalDecision, Answerer)>;

/// Who answered an approval: the person at the app or terminal, or an MCP client
/// asked by elicitation, which may have shown it to a person or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    User,
    /// The client accepted or declined (a client that cannot show the question,
    /// such as `claude -p`, declines by itself).
    ClientAnswered,
    /// The client cancelled the question, or could not be asked at all.
    ClientDidNotAsk,
}

impl Answerer {
    /// The `by` of the `approval_resolved` event.
    pub fn as_str(self) -> &'static str {
        match self {
            Answerer::User => "user",
            Answerer::ClientAnswered | Answerer::ClientDidNotAsk => "client",
        }
    }
}

/// Steers a running turn from another task: cancel the turn or any call in it,
/// answer approval requests.
#[derive(Debug, Clone, Default)]
pub struct TurnControl {
    pub(crate) root: CancellationToken,
    calls: Arc<Mutex<HashMap<String, CancellationToken>>>,
    pub(crate) approvals: Arc<Mutex<HashMap<String, ApprovalSlot>>>,
    /// Questions of remote agents waiting for the user, by call id.
    pub(crate) questions: Arc<Mutex<HashMap<String, AnswerSlot>>>,
    /// Running calls' steering, by call id.
    steers: Arc<Mutex<HashMap<String, SteerPort>>>,
    pub(crate) policy: ApprovalPolicy,
    pub(crate) session: Session,
}

impl TurnControl {
    /// A control for a turn of `session`, answering approvals as `policy` says.
    pub fn new(policy: ApprovalPolicy, session: Session) -> TurnControl {
        TurnControl { policy, session, ..TurnControl::default() }
    }

    /// A control that approves every request (and reports that it did).
    pub fn approving_all() -> TurnControl {
        TurnControl::new(ApprovalPolicy::ApproveAll, Session::default())
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Cancels every call of the turn.
    pub fn cancel_turn(&self) {
        self.root.cancel();
    }

    /// Cancels one call and its subtree; its parent gets a `cancelled` result and
    /// continues. Returns false when no such call is running.
    pub fn cancel_call(&self, call_id: &str) -> bool {
        match self.calls.lock().unwrap().get(call_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Answers the approval request of `call_id`; false when none is waiting.
    pub fn resolve_approval(&self, call_id: &str, decision: ApprovalDecision) -> bool {
        self.resolve_approval_by(call_id, decision, Answerer::User)
    }

    /// Answers a waiting approval as `answerer` gave it: an MCP client that
    /// declined by itself is not a user who said no.
    pub fn resolve_approval_by(&self, call_id: &str, decision: ApprovalDecision, answerer: Answerer) -> bool {
        match self.approvals.lock().unwrap().remove(call_id) {
            Some(sender) => sender.send((decision, answerer)).is_ok(),
            None => false,
        }
    }

    /// Answers the question `call_id`'s remote agent asked (`None` declines it);
    /// false when no question of that call is waiting.
    pub fn answer_input(&self, call_id: &str, answer: Option<String>) -> bool {
        let slot = self.questions.lock().unwrap().remove(call_id);
        slot.is_some_and(|slot| slot.send(answer))
    }

    /// Sends `message` into the running call `call_id`, from `by` (`user`). The
    /// call takes it in at its next chance (see `Steering`), and reports it with a
    /// `call_steered` event then.
    pub fn steer_call(&self, call_id: &str, message: &str, by: &str) -> Result<(), SteerRefusal> {
        let message = message.trim();
        if message.is_empty() {
            return Err(SteerRefusal::BadMessage("the message is empty".into()));
        }
        if message.len() > MAX_STEER_BYTES {
            let why = format!(
                "the message is {} bytes, over the {MAX_STEER_BYTES} a call can be steered with",
                message.len()
            );
            return Err(SteerRefusal::BadMessage(why));
        }
        match self.steers.lock().unwrap().get(call_id) {
            None => Err(SteerRefusal::NotRunning),
            Some(SteerPort::Not(why)) => Err(SteerRefusal::NotSteerable(why.clone())),
            Some(SteerPort::Inbox(inbox)) => {
                inbox.push(SteerMessage { message: message.to_string(), by: by.to_string() });
                Ok(())
            }
        }
    }

    pub(crate) fn register(&self, call_id: &str, token: CancellationToken, steering: &Steering) -> Option<SteerInbox> {
        self.calls.lock().unwrap().insert(call_id.to_string(), token);
        let (port, inbox) = match steering {
            Steering::NextStep | Steering::OnTask | Steering::Stdin => {
                let inbox = SteerInbox::default();
                (SteerPort::Inbox(inbox.clone()), Some(inbox))
            }
            Steering::Not { why } => (SteerPort::Not(why.clone()), None),
        };
        self.steers.lock().unwrap().insert(call_id.to_string(), port);
        inbox
    }

    pub(crate) fn unregister(&self, call_id: &str) {
        self.calls.lock().unwrap().remove(call_id);
        self.steers.lock().unwrap().remove(call_id);
        self.approvals.lock().unwrap().remove(call_id);
        self.questions.lock().unwrap().remove(call_id);
    }
}

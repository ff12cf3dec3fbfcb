//! The state every call of one turn shares: the ordered event log (sequence
//! numbers), the usage and cost tree with its live roll-up, and the turn's
//! budgets, checked against both reported and still-streaming usage.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::config::{Config, Limits, Prices};
use crate::event::{CallEvent, EventKind, EventSink, Usage};
use crate::runner::cache::RunnerCache;

use super::control::TurnControl;
use crate::sources::{Clock, NonceSource};

#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub call_id: String,
    pub parent_id: Option<String>,
    pub agent: String,
    pub depth: u32,
}

pub(crate) struct Turn {
    pub config: Arc<Config>,
    /// The turn-wide limits: the global ones under the root agent's own.
    pub limits: Limits,
    /// The dispatcher's runners; a call keeps the runner it took until it ends.
    pub runners: Arc<RunnerCache>,
    log: Mutex<TurnLog>,
    sink: EventSink,
    clock: Clock,
    pub nonce: NonceSource,
    next_call: AtomicU64,
    /// Tool-agent calls started (or reserved) in this turn.
    pub delegations: AtomicU32,
    pub control: TurnControl,
    /// Answers of an interrupted turn's calls this turn may hand back (each once).
    pub reuse: Mutex<Vec<super::reuse::ReusedCall>>,
    /// Where the turn's primary picks up (taken by its tool loop).
    pub continuation: Mutex<Option<super::reuse::Continuation>>,
}

/// Sequence numbers, the usage tree and the still-streaming estimates; one lock, so
/// every event's figures agree with the order it is emitted in.
struct TurnLog {
    seq: u64,
    nodes: HashMap<String, UsageNode>,
    /// Tokens streamed but not yet reported by their runner (estimated from text).
    streaming_tokens: u64,
    streaming_cost: f64,
}

struct UsageNode {
    header: Header,
    prices: Option<Prices>,
    own: Option<Usage>,
    total: Option<Usage>,
    own_cost: Option<f64>,
    total_cost: Option<f64>,
}

/// A call's figures when it finishes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    pub usage: Option<Usage>,
    pub usage_total: Option<Usage>,
    pub cost: Option<f64>,
    pub cost_total: Option<f64>,
}

impl Turn {
    pub fn new(
        config: Arc<Config>,
        limits: Limits,
        runners: Arc<RunnerCache>,
        sink: EventSink,
        (clock, nonce): (Clock, NonceSource),
        control: TurnControl,
    ) -> Turn {
        Turn {
            config,
            limits,
            runners,
            log: Mutex::new(TurnLog { seq: 0, nodes: HashMap::new(), streaming_tokens: 0, streaming_cost: 0.0 }),
            sink,
            clock,
            nonce,
            next_call: AtomicU64::new(0),
            delegations: AtomicU32::new(0),
            control,
            reuse: Mutex::new(Vec::new()),
            continuation: Mutex::new(None),
        }
    }

    pub fn new_call_id(&self) -> String {
        format!("c{}", self.next_call.fetch_add(1, Ordering::Relaxed) + 1)
    }

    pub fn emit(&self, header: &Header, kind: EventKind) {
        let mut log = self.log.lock().unwrap();
        self.emit_locked(&mut log, header, kind);
    }

    fn emit_locked(&self, log: &mut TurnLog, header: &Header, kind: EventKind) {
        log.seq += 1;
        (self.sink)(CallEvent {
            seq: log.seq,
            ts_ms: (self.clock)(),
            call_id: header.call_id.clone(),
            parent_id: header.parent_id.clone(),
            agent: header.agent.clone(),
            depth: header.depth,
            kind,
        });
    }

    pub fn register_node(&self, header: &Header, prices: Option<Prices>) {
        let mut log = self.log.lock().unwrap();
        let node =
            UsageNode { header: header.clone(), prices, own: None, total: None, own_cost: None, total_cost: None };
        log.nodes.insert(header.call_id.clone(), node);
    }

    /// Adds a step's usage to a call and to every ancestor's total, emitting one
    /// `usage_updated` per changed call (the call first, then up the path).
    /// `streamed_estimate` is what this step's text was counted as while it
    /// streamed; the real figure replaces it.
    /// `reported_cost` is what the agent said the step cost; the agent's prices win.
    /// A reported cost that is negative or not finite is dropped: a peer's number
    /// never lowers what a turn has cost, nor switches its budget off.
    pub fn add_usage(&self, header: &Header, usage: Usage, reported_cost: Option<f64>, streamed_estimate: u64) {
        let reported_cost = reported_cost.filter(|cost| cost.is_finite() && *cost >= 0.0);
        let mut log = self.log.lock().unwrap();
        let prices = log.nodes.get(&header.call_id).and_then(|node| node.prices);
        let cost = prices.map(|prices| prices.cost(&usage)).or(reported_cost);
        log.streaming_tokens = log.streaming_tokens.saturating_sub(streamed_estimate);
        if let Some(prices) = prices {
            let estimate_cost = streamed_estimate as f64 * prices.output_per_million / 1e6;
            log.streaming_cost = (log.streaming_cost - estimate_cost).max(0.0);
        }
        let mut updates = Vec::new();
        let mut current = Some(header.call_id.clone());
        while let Some(call_id) = current {
            let Some(node) = log.nodes.get_mut(&call_id) else { break };
            if call_id == header.call_id {
                node.own.get_or_insert_with(Usage::default).add(&usage);
                if let Some(cost) = cost {
                    *node.own_cost.get_or_insert(0.0) += cost;
                }
            }
            node.total.get_or_insert_with(Usage::default).add(&usage);
            if let Some(cost) = cost {
                *node.total_cost.get_or_insert(0.0) += cost;
            }
            updates.push((
                node.header.clone(),
                node.own.unwrap_or_default(),
                node.total.unwrap_or_default(),
                node.own_cost,
                node.total_cost,
            ));
            current = node.header.parent_id.clone();
        }
        for (update_header, own, total, own_cost, total_cost) in updates {
            let kind =
                EventKind::UsageUpdated { usage: own, usage_total: total, cost: own_cost, cost_total: total_cost };
            self.emit_locked(&mut log, &update_header, kind);
        }
    }

    /// Counts text that is streaming now (about four characters a token), so a
    /// budget holds while a runner has not reported its usage yet. Returns why the
    /// turn is over budget, if it now is.
    pub fn add_streaming(&self, call_id: &str, tokens: u64) -> Option<String> {
        let mut log = self.log.lock().unwrap();
        let prices = log.nodes.get(call_id).and_then(|node| node.prices);
        log.streaming_tokens = log.streaming_tokens.saturating_add(tokens);
        if let Some(prices) = prices {
            log.streaming_cost += tokens as f64 * prices.output_per_million / 1e6;
        }
        self.over_budget_locked(&log)
    }

    /// Why a new call may not start: the turn's token or cost budget is spent.
    pub fn over_budget(&self) -> Option<String> {
        let log = self.log.lock().unwrap();
        self.over_budget_locked(&log)
    }

    fn over_budget_locked(&self, log: &TurnLog) -> Option<String> {
        let roots = log.nodes.values().filter(|node| node.header.parent_id.is_none());
        let (mut tokens, mut cost) = (log.streaming_tokens, log.streaming_cost);
        for root in roots {
            tokens = tokens.saturating_add(root.total.map(|usage| usage.total_tokens).unwrap_or(0));
            cost += root.total_cost.unwrap_or(0.0);
        }
        if let Some(budget) = self.limits.max_tokens_per_turn {
            if tokens >= budget {
                return Some(format!(
                    "this turn used {tokens} tokens of its {budget}-token budget (limits.max_tokens_per_turn)"
                ));
            }
        }
        if let Some(budget) = self.limits.max_cost_per_turn {
            if cost >= budget {
                return Some(format!("this turn cost {cost:.4} of its {budget} budget (limits.max_cost_per_turn)"));
            }
        }
        None
    }

    pub fn figures_of(&self, call_id: &str) -> Figures {
        let log = self.log.lock().unwrap();
        log.nodes
            .get(call_id)
            .map(|node| Figures {
                usage: node.own,
                usage_total: node.total,
                cost: node.own_cost,
                cost_total: node.total_cost,
            })
            .unwrap_or_default()
    }
}

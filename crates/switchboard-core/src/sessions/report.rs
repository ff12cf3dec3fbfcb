//! The delegation report: from the session logs, per tool-agent, how its calls
//! ended (ok, error, denied, limited, cancelled), their median and p95 time, their
//! tokens (own and with their subtrees) and cost; per primary, what turns that
//! delegated cost against turns that did not (the multiple the design asks to
//! watch before delegation is widened); and calls, tokens and cost per agent per
//! day, for the charts. Pure over records (`ReportBuilder`), one pass, linear in
//! the events; `report` reads a store's sessions into it.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use specta::Type;
use specta_typescript::Number;

use super::store::{SessionError, SessionRecord, SessionStore};
use crate::event::{CallStatus, EventKind};

/// The span of time a report covers, in milliseconds since the Unix epoch (either end open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportRange {
    pub since_ms: Option<u64>,
    pub until_ms: Option<u64>,
}

impl ReportRange {
    fn holds(&self, ts_ms: u64) -> bool {
        self.since_ms.is_none_or(|since| ts_ms >= since) && self.until_ms.is_none_or(|until| ts_ms < until)
    }
}

/// How the calls of one tool-agent went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct AgentFigures {
    pub agent: String,
    pub calls: u32,
    pub ok: u32,
    pub error: u32,
    pub denied: u32,
    pub limited: u32,
    pub cancelled: u32,
    /// Median and 95th percentile of the calls' time, start to finish (nearest rank).
    #[specta(type = Option<Number>)]
    pub median_ms: Option<u64>,
    #[specta(type = Option<Number>)]
    pub p95_ms: Option<u64>,
    /// Tokens of its own model steps.
    #[specta(type = Number)]
    pub own_tokens: u64,
    /// Tokens of its calls with everything they delegated.
    #[specta(type = Number)]
    pub subtree_tokens: u64,
    /// Cost of its own model steps, and with its subtrees: `None` while none of
    /// its calls reported a price (unpriced is not free).
    pub own_cost: Option<f64>,
    pub subtree_cost: Option<f64>,
}

/// What one primary's turns cost, those that delegated against those that did not.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct PrimaryFigures {
    pub primary: String,
    pub delegating_turns: u32,
    pub plain_turns: u32,
    /// Mean tokens and cost of a turn of each kind (none without such turns).
    pub delegating_tokens_mean: Option<f64>,
    pub plain_tokens_mean: Option<f64>,
    pub delegating_cost_mean: Option<f64>,
    pub plain_cost_mean: Option<f64>,
    /// How many times a plain turn's tokens (and cost) a delegating turn took.
    pub token_multiple: Option<f64>,
    pub cost_multiple: Option<f64>,
}

/// One agent's calls on one day (UTC), for the charts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct DayFigures {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    pub agent: String,
    pub calls: u32,
    #[specta(type = Number)]
    pub tokens: u64,
    pub cost: f64,
}

/// The report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct DelegationReport {
    #[specta(type = Option<Number>)]
    pub since_ms: Option<u64>,
    #[specta(type = Option<Number>)]
    pub until_ms: Option<u64>,
    pub sessions: u32,
    pub turns: u32,
    /// Per tool-agent, the most called first.
    pub agents: Vec<AgentFigures>,
    pub primaries: Vec<PrimaryFigures>,
    /// Per day, then per agent.
    pub days: Vec<DayFigures>,
    /// Log lines that could not be read (skipped, as the sessions do).
    pub skipped_lines: u32,
}

#[derive(Default)]
struct AgentSums {
    figures: AgentFigures,
    durations: Vec<u64>,
}

#[derive(Default)]
struct PrimarySums {
    delegating: (u32, u64, f64),
    plain: (u32, u64, f64),
}

/// Reads records one by one (a session's in its order) into a report.
#[derive(Default)]
pub struct ReportBuilder {
    range: ReportRange,
    agents: HashMap<String, AgentSums>,
    primaries: HashMap<String, PrimarySums>,
    days: BTreeMap<(String, String), DayFigures>,
    /// Per turn of the session being read: each running call's start, and whether it delegated.
    starts: HashMap<(String, String), u64>,
    delegated: HashMap<String, bool>,
    /// Calls of a resumed turn answered from the interrupted one's log: counted there.
    reused: std::collections::HashSet<(String, String)>,
    sessions: u32,
    turns: u32,
    skipped_lines: u32,
}

impl ReportBuilder {
    pub fn new(range: ReportRange) -> ReportBuilder {
        ReportBuilder { range, ..ReportBuilder::default() }
    }

    /// A new session begins: its turns are its own.
    pub fn start_session(&mut self, skipped_lines: u32) {
        self.sessions += 1;
        self.skipped_lines += skipped_lines;
        self.starts.clear();
        self.delegated.clear();
        self.reused.clear();
    }

    pub fn add(&mut self, record: &SessionRecord) {
        let SessionRecord::Event { turn_id, event } = record else { return };
        match &event.kind {
            EventKind::CallStarted { .. } => {
                self.starts.insert((turn_id.clone(), event.call_id.clone()), event.ts_ms);
                if event.depth > 0 {
                    self.delegated.insert(turn_id.clone(), true);
                }
            }
            EventKind::ToolProgress { data: Some(data), .. } if data.get("reused").is_some() => {
                self.reused.insert((turn_id.clone(), event.call_id.clone()));
            }
            EventKind::CallFinished { status, usage, usage_total, cost, cost_total, .. } => {
                let started = self.starts.remove(&(turn_id.clone(), event.call_id.clone()));
                // A call a resumed turn did not run again was counted in the turn that ran it.
                if self.reused.remove(&(turn_id.clone(), event.call_id.clone())) {
                    return;
                }
                if !self.range.holds(event.ts_ms) {
                    if event.depth == 0 {
                        self.delegated.remove(turn_id);
                    }
                    return;
                }
                let own = usage.map(|usage| usage.total_tokens).unwrap_or(0);
                let subtree = usage_total.map(|usage| usage.total_tokens).unwrap_or(own);
                let own_cost = cost.unwrap_or(0.0);
                let subtree_cost = cost_total.unwrap_or(own_cost);
                if event.depth == 0 {
                    self.turns += 1;
                    let sums = self.primaries.entry(event.agent.clone()).or_default();
                    let kind = if self.delegated.remove(turn_id).unwrap_or(false) {
                        &mut sums.delegating
                    } else {
                        &mut sums.plain
                    };
                    kind.0 += 1;
                    kind.1 += subtree;
                    kind.2 += subtree_cost;
                    return;
                }
                let sums = self.agents.entry(event.agent.clone()).or_default();
                let figures = &mut sums.figures;
                figures.calls += 1;
                match status {
                    CallStatus::Ok => figures.ok += 1,
                    CallStatus::Error => figures.error += 1,
                    CallStatus::Denied => figures.denied += 1,
                    CallStatus::Limited => figures.limited += 1,
                    CallStatus::Cancelled => figures.cancelled += 1,
                }
                figures.own_tokens = figures.own_tokens.saturating_add(own);
                figures.subtree_tokens = figures.subtree_tokens.saturating_add(subtree);
                let add = |sum: Option<f64>, cost: Option<f64>| match (sum, cost) {
                    (Some(sum), Some(cost)) => Some(sum + cost),
                    (sum, cost) => sum.or(cost),
                };
                figures.own_cost = add(figures.own_cost, *cost);
                figures.subtree_cost = add(figures.subtree_cost, cost_total.or(*cost));
                if let Some(started) = started {
                    sums.durations.push(event.ts_ms.saturating_sub(started));
                }
                let day = utc_day(event.ts_ms);
                let bucket = self.days.entry((day.clone(), event.agent.clone())).or_insert_with(|| DayFigures {
                    day,
                    agent: event.agent.clone(),
                    ..DayFigures::default()
                });
                bucket.calls += 1;
                bucket.tokens = bucket.tokens.saturating_add(subtree);
                bucket.cost += subtree_cost;
            }
            _ => {}
        }
    }

    pub fn finish(self) -> DelegationReport {
        let mut agents: Vec<AgentFigures> = self
            .agents
            .into_iter()
            .map(|(name, mut sums)| {
                sums.durations.sort_unstable();
                sums.figures.agent = name;
                sums.figures.median_ms = nearest_rank(&sums.durations, 50);
                sums.figures.p95_ms = nearest_rank(&sums.durations, 95);
                sums.figures
            })
            .collect();
        agents.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.agent.cmp(&b.agent)));
        let mean = |(count, tokens, _): (u32, u64, f64)| (count > 0).then(|| tokens as f64 / f64::from(count));
        let mean_cost = |(count, _, cost): (u32, u64, f64)| (count > 0).then(|| cost / f64::from(count));
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let mut primaries: Vec<PrimaryFigures> = self
            .primaries
            .into_iter()
            .map(|(primary, sums)| {
                let (delegating_tokens_mean, plain_tokens_mean) = (mean(sums.delegating), mean(sums.plain));
                let (delegating_cost_mean, plain_cost_mean) = (mean_cost(sums.delegating), mean_cost(sums.plain));
                PrimaryFigures {
                    primary,
                    delegating_turns: sums.delegating.0,
                    plain_turns: sums.plain.0,
                    token_multiple: ratio(delegating_tokens_mean, plain_tokens_mean),
                    cost_multiple: ratio(delegating_cost_mean, plain_cost_mean),
                    delegating_tokens_mean,
                    plain_tokens_mean,
                    delegating_cost_mean,
                    plain_cost_mean,
                }
            })
            .collect();
        primaries.sort_by(|a, b| a.primary.cmp(&b.primary));
        DelegationReport {
            since_ms: self.range.since_ms,
            until_ms: self.range.until_ms,
            sessions: self.sessions,
            turns: self.turns,
            agents,
            primaries,
            days: self.days.into_values().collect(),
            skipped_lines: self.skipped_lines,
        }
    }
}

/// The value at `percent` of sorted `values` by the nearest-rank method.
fn nearest_rank(sorted: &[u64], percent: usize) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

/// `YYYY-MM-DD` of a UTC instant (the civil-from-days algorithm).
pub fn utc_day(ts_ms: u64) -> String {
    let days = (ts_ms / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The first instant (ms) of a `YYYY-MM-DD` UTC day; None when it is not such a date.
pub fn day_start_ms(day: &str) -> Option<u64> {
    let mut parts = day.splitn(3, '-');
    let (year, month, date): (i64, i64, i64) =
        (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    if day.len() != 10 || !(1..=12).contains(&month) || !(1..=31).contains(&date) || year < 1970 {
        return None;
    }
    let year_shifted = if month <= 2 { year - 1 } else { year };
    let era = year_shifted.div_euclid(400);
    let year_of_era = year_shifted - era * 400;
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + date - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let start = u64::try_from(days).ok()? * 86_400_000;
    (utc_day(start) == day).then_some(start)
}

/// The report over every session of `store` in `range`. A turn taken back (Retry,
/// Edit and resend) is left out, as the session list leaves it out: the report
/// counts the turns the sessions show.
pub fn report(store: &SessionStore, range: ReportRange) -> Result<DelegationReport, SessionError> {
    let mut builder = ReportBuilder::new(range);
    for id in store.ids()? {
        let log = store.load(&id)?;
        builder.start_session(log.skipped_lines);
        let taken_back = log.taken_back();
        for record in &log.records {
            match record {
                SessionRecord::Event { turn_id, .. } if taken_back.contains(turn_id.as_str()) => {}
                record => builder.add(record),
            }
        }
    }
    Ok(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip_and_reject_what_is_not_a_date() {
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_day(951_782_400_000), "2000-02-29");
        assert_eq!(utc_day(1_798_761_599_999), "2026-12-31");
        for day in ["1970-01-01", "2000-02-29", "2026-12-02", "2100-03-01"] {
            assert_eq!(utc_day(day_start_ms(day).unwrap()), day);
        }
        for bad in ["2026-02-30", "2026-13-01", "26-1-1", "yesterday", "2026-12-02T00"] {
            assert_eq!(day_start_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn percentiles_are_by_nearest_rank() {
        let values: Vec<u64> = (1..=20).collect();
        assert_eq!((nearest_rank(&values, 50), nearest_rank(&values, 95)), (Some(10), Some(19)));
        assert_eq!(nearest_rank(&[7], 95), Some(7));
        assert_eq!(nearest_rank(&[], 50), None);
    }
}

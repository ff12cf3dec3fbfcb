//! The observed call every shell makes of its `TurnPipeline`: each event goes into
//! the pipeline (logged when it has a log, traced, shown), and the call's end ends
//! it, the client answered once its log and trace are complete.

use std::sync::Mutex;

use futures::future::BoxFuture;
use switchboard_core::dispatch::ToolCallOutcome;
use switchboard_core::event::{CallEvent, EventSink};
use switchboard_core::sessions::TurnPipeline;

use crate::ObservedCall;

/// A call followed through its pipeline (none: it could not be logged, and is not shown).
pub struct PipelineCall {
    sink: Option<EventSink>,
    pipeline: Mutex<Option<TurnPipeline>>,
    /// The agent the call went to (the turn's `answered_by`).
    agent: String,
}

impl PipelineCall {
    pub fn new(pipeline: Option<TurnPipeline>, agent: &str) -> PipelineCall {
        let sink = pipeline.as_ref().map(TurnPipeline::sink);
        PipelineCall { sink, pipeline: Mutex::new(pipeline), agent: agent.to_string() }
    }
}

impl ObservedCall for PipelineCall {
    fn event(&self, event: &CallEvent) {
        if let Some(sink) = &self.sink {
            sink(event.clone());
        }
    }

    fn finished(&self, outcome: &ToolCallOutcome) -> BoxFuture<'static, ()> {
        let pipeline = self.pipeline.lock().unwrap().take();
        let (status, text, agent) = (outcome.status, outcome.text.clone(), self.agent.clone());
        Box::pin(async move {
            let Some(pipeline) = pipeline else { return };
            if let Err(error) = pipeline.end(status, &text, &agent).await {
                tracing::warn!(%error, "an MCP call's log could not be written");
            }
        })
    }
}

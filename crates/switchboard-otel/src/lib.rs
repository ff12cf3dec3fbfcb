//! Switchboard's call trees as OpenTelemetry traces: one more consumer of the
//! ordered event stream (beside the UI, the CLI and the session log). `Telemetry`
//! is the core's `Tracer`: a turn's pipeline records each event after it is logged
//! and before it is shown (a push onto a list, on the turn's own thread); when the turn ends its
//! spans are built (`spans.rs`) and handed to the SDK's batch processor, which
//! exports them over OTLP/HTTP from its own thread, off the turn's path. A failed
//! export is kept as the exporter's health (a warning to show), never a turn error.
//!
//! The rooms: `settings.rs` (whether and where, pure), `spans.rs` (events to spans,
//! GenAI conventions), this file (the exporter, its health, the per-turn recorder).

pub mod settings;
pub mod spans;

use std::sync::{Arc, Mutex};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter, Tracer};
use opentelemetry_sdk::Resource;
use switchboard_core::config::Config;
use switchboard_core::event::{CallEvent, EventKind};

pub use settings::{resolve, ExportSettings};
pub use spans::{export_turn, TurnContext};

/// How exporting has gone so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportHealth {
    pub batches_sent: u64,
    pub spans_sent: u64,
    /// The last failure, until an export succeeds again.
    pub last_error: Option<String>,
}

/// The exporter: where spans go, and how that has gone.
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: Tracer,
    endpoint: String,
    include_content: bool,
    health: Arc<Mutex<ExportHealth>>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Telemetry").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Export as the config's `telemetry` section and the `OTEL_*` variables say;
    /// `Ok(None)` when neither asks for it.
    pub fn from_config(config: &Config) -> Result<Option<Telemetry>, String> {
        match resolve(config.telemetry.as_ref(), |name| std::env::var(name).ok())? {
            Some(settings) => Telemetry::start(settings).map(Some),
            None => Ok(None),
        }
    }

    /// An OTLP/HTTP (protobuf) exporter behind the SDK's batch processor.
    pub fn start(settings: ExportSettings) -> Result<Telemetry, String> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.endpoint.clone())
            .with_headers(settings.headers.clone())
            .build()
            .map_err(|error| format!("the trace exporter for {} could not start: {error}", settings.endpoint))?;
        Ok(Telemetry::with_exporter(exporter, settings))
    }

    /// Any exporter (the tests' in-memory one) behind the batch processor.
    pub fn with_exporter(exporter: impl SpanExporter + 'static, settings: ExportSettings) -> Telemetry {
        let health = Arc::new(Mutex::new(ExportHealth::default()));
        let reporting = Reporting { inner: exporter, health: health.clone() };
        let resource = Resource::builder_empty()
            .with_service_name(settings.service_name.clone())
            // Phoenix files the traces under this project (other backends ignore it).
            .with_attribute(KeyValue::new("openinference.project.name", settings.service_name.clone()))
            .build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(reporting).with_resource(resource).build();
        let tracer = provider.tracer("switchboard");
        Telemetry { provider, tracer, endpoint: settings.endpoint, include_content: settings.include_content, health }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn health(&self) -> ExportHealth {
        self.health.lock().unwrap().clone()
    }

    /// A recorder for one turn of `conversation` (a session id), on `config`'s agents.
    pub fn turn(&self, config: &Config, conversation: Option<String>) -> TurnRecorder {
        TurnRecorder {
            tracer: self.tracer.clone(),
            context: TurnContext::new(config, conversation, self.include_content),
            events: Mutex::new(Vec::new()),
        }
    }

    /// Exports the spans of a turn already recorded (a stored session's turns).
    pub fn export_events(&self, config: &Config, conversation: Option<String>, events: &[CallEvent]) -> usize {
        export_turn(&self.tracer, events, &TurnContext::new(config, conversation, self.include_content))
    }

    /// Sends what is queued and waits for it (blocking: call it off async threads).
    pub fn flush(&self) -> Result<(), String> {
        self.provider.force_flush().map_err(|error| error.to_string())
    }

    /// What a shell does with its exporter as it exits: sends what is queued,
    /// stops the exporter's thread, and says whether export failed on the way
    /// (blocking: call it off async threads).
    pub fn finish(&self) -> Result<(), String> {
        let flushed = self.shutdown();
        match self.health().last_error.or(flushed.err()) {
            Some(error) => Err(format!("trace export to {} failed: {error}", self.endpoint())),
            None => Ok(()),
        }
    }

    /// Sends what is queued and stops the exporter's thread.
    pub fn shutdown(&self) -> Result<(), String> {
        self.provider.shutdown().map_err(|error| error.to_string())
    }
}

/// One turn's events on their way to becoming spans.
#[derive(Debug)]
pub struct TurnRecorder {
    tracer: Tracer,
    context: TurnContext,
    events: Mutex<Vec<CallEvent>>,
}

impl TurnRecorder {
    /// Keeps `event` (cheap); when it ends the turn's root call, the turn's spans
    /// are built and queued for export.
    pub fn record(&self, event: &CallEvent) {
        // Text, progress and usage updates are what a turn is mostly made of and no
        // span needs them (the answer and the usage are in `call_finished`): passed by.
        if matches!(
            event.kind,
            EventKind::TextDelta { .. }
                | EventKind::ReasoningDelta { .. }
                | EventKind::ToolProgress { .. }
                | EventKind::UsageUpdated { .. }
        ) {
            return;
        }
        let ends_turn = event.parent_id.is_none() && matches!(event.kind, EventKind::CallFinished { .. });
        let mut events = self.events.lock().unwrap();
        events.push(event.clone());
        if ends_turn {
            let finished = std::mem::take(&mut *events);
            drop(events);
            export_turn(&self.tracer, &finished, &self.context);
        }
    }
}

/// The exporter with its outcomes kept as health.
#[derive(Debug)]
struct Reporting<E> {
    inner: E,
    health: Arc<Mutex<ExportHealth>>,
}

impl<E: SpanExporter> SpanExporter for Reporting<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let count = batch.len() as u64;
        let result = self.inner.export(batch).await;
        let mut health = self.health.lock().unwrap();
        match &result {
            Ok(()) => {
                health.batches_sent += 1;
                health.spans_sent += count;
                health.last_error = None;
            }
            Err(error) => health.last_error = Some(error.to_string()),
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: std::time::Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The core's turn pipeline traces through this: one recorder per turn.
impl switchboard_core::sessions::Tracer for Telemetry {
    fn turn(&self, config: &Config, conversation: Option<&str>) -> Box<dyn switchboard_core::sessions::TurnTrace> {
        Box::new(Telemetry::turn(self, config, conversation.map(str::to_string)))
    }
}

impl switchboard_core::sessions::TurnTrace for TurnRecorder {
    fn record(&self, event: &CallEvent) {
        TurnRecorder::record(self, event);
    }
}

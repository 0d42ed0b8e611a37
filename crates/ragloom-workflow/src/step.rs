//! Steps: what a step accepts and may emit (for validation and drawings),
//! how many run at once, and how a failed one is retried.

use crate::context::Context;
use crate::event::{AnyEvent, Event, EventType};
use futures::future::BoxFuture;
use ragloom_core::error::{Error, Result};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// What a step returns: no event, one, or one of several kinds. Its
/// [`event_types`](StepOutput::event_types) are what validation and the
/// drawing know the step can emit.
pub trait StepOutput: Send + 'static {
    /// Every event type the step can emit.
    fn event_types() -> Vec<EventType>;
    /// The events returned this time.
    fn into_events(self) -> Vec<AnyEvent>;
}

impl<E: Event> StepOutput for E {
    fn event_types() -> Vec<EventType> {
        vec![EventType::of::<E>()]
    }
    fn into_events(self) -> Vec<AnyEvent> {
        vec![AnyEvent::new(self)]
    }
}

/// `None` sends nothing (Python's `-> A | None`).
impl<T: StepOutput> StepOutput for Option<T> {
    fn event_types() -> Vec<EventType> {
        T::event_types()
    }
    fn into_events(self) -> Vec<AnyEvent> {
        self.map(T::into_events).unwrap_or_default()
    }
}

impl StepOutput for () {
    fn event_types() -> Vec<EventType> {
        Vec::new()
    }
    fn into_events(self) -> Vec<AnyEvent> {
        Vec::new()
    }
}

/// An enum of event kinds a step may return, as Python's `-> A | B | None`.
///
/// ```
/// use ragloom_workflow::{step_output, Event, StopEvent};
/// #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
/// struct Retry { attempt: u32 }
/// impl Event for Retry {}
///
/// step_output! {
///     /// Either try again or stop.
///     pub enum Judged { Retry(Retry), Stop(StopEvent) }
/// }
/// let out: Judged = StopEvent::new("done").into();
/// # use ragloom_workflow::StepOutput;
/// assert_eq!(Judged::event_types().len(), 2);
/// ```
#[macro_export]
macro_rules! step_output {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident($ty:ty)),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug)]
        $vis enum $name { $(#[allow(missing_docs)] $variant($ty)),+ }
        impl $crate::StepOutput for $name {
            fn event_types() -> Vec<$crate::EventType> {
                vec![$($crate::EventType::of::<$ty>()),+]
            }
            fn into_events(self) -> Vec<$crate::AnyEvent> {
                match self { $($name::$variant(e) => vec![$crate::AnyEvent::new(e)]),+ }
            }
        }
        $(impl From<$ty> for $name {
            fn from(e: $ty) -> Self { $name::$variant(e) }
        })+
    };
}

/// How a failed step is retried: given the attempts so far (1 after the
/// first failure) and the error, the delay before the next, or `None` to give up.
pub trait RetryPolicy: Send + Sync + fmt::Debug {
    /// The delay before the next attempt, or `None` to fail the run.
    fn next(&self, elapsed: Duration, attempts: u32, error: &Error) -> Option<Duration>;
}

/// LlamaIndex's `ConstantDelayRetryPolicy`: up to `maximum_attempts`
/// attempts in all (default 3), `delay` apart (default 5 s).
#[derive(Clone, Debug)]
pub struct ConstantDelayRetryPolicy {
    /// Attempts in all, the first included.
    pub maximum_attempts: u32,
    /// The wait between attempts.
    pub delay: Duration,
}

impl Default for ConstantDelayRetryPolicy {
    fn default() -> Self {
        Self {
            maximum_attempts: 3,
            delay: Duration::from_secs(5),
        }
    }
}

impl ConstantDelayRetryPolicy {
    /// `maximum_attempts` attempts, `delay` apart.
    pub fn new(maximum_attempts: u32, delay: Duration) -> Self {
        Self {
            maximum_attempts,
            delay,
        }
    }
}

impl RetryPolicy for ConstantDelayRetryPolicy {
    fn next(&self, _elapsed: Duration, attempts: u32, _error: &Error) -> Option<Duration> {
        (attempts < self.maximum_attempts).then_some(self.delay)
    }
}

pub(crate) type StepFn =
    Arc<dyn Fn(AnyEvent, Context) -> BoxFuture<'static, Result<Vec<AnyEvent>>> + Send + Sync>;

/// How a step runs: workers at once and a retry policy.
#[derive(Clone, Debug)]
pub struct StepConfig {
    pub(crate) num_workers: usize,
    pub(crate) retry_policy: Option<Arc<dyn RetryPolicy>>,
}

impl Default for StepConfig {
    fn default() -> Self {
        Self {
            num_workers: 4,
            retry_policy: None,
        }
    }
}

impl StepConfig {
    /// LlamaIndex's defaults: 4 workers, no retries.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many events this step handles at once (at least 1).
    pub fn num_workers(mut self, n: usize) -> Self {
        self.num_workers = n.max(1);
        self
    }

    /// Retries a failed attempt as `policy` says.
    pub fn retry_policy(mut self, policy: impl RetryPolicy + 'static) -> Self {
        self.retry_policy = Some(Arc::new(policy));
        self
    }
}

/// One step of a workflow, as the runtime holds it.
#[derive(Clone)]
pub struct StepSpec {
    pub(crate) name: String,
    pub(crate) accepts: Vec<EventType>,
    pub(crate) emits: Vec<EventType>,
    pub(crate) config: StepConfig,
    pub(crate) run: StepFn,
}

impl StepSpec {
    /// The step's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The event types it accepts.
    pub fn accepts(&self) -> &[EventType] {
        &self.accepts
    }
    /// The event types it may emit.
    pub fn emits(&self) -> &[EventType] {
        &self.emits
    }
}

impl fmt::Debug for StepSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepSpec")
            .field("name", &self.name)
            .field("accepts", &self.accepts)
            .field("emits", &self.emits)
            .field("config", &self.config)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_delay_gives_up_after_its_attempts() {
        let p = ConstantDelayRetryPolicy::new(3, Duration::from_millis(10));
        let e = Error::Other("x".into());
        assert_eq!(
            p.next(Duration::ZERO, 1, &e),
            Some(Duration::from_millis(10))
        );
        assert_eq!(
            p.next(Duration::ZERO, 2, &e),
            Some(Duration::from_millis(10))
        );
        assert_eq!(p.next(Duration::ZERO, 3, &e), None);
    }
}

//! Events, the messages a workflow's steps pass: the [`Event`] trait, the
//! type-erased [`AnyEvent`] the runtime routes, and the built-in events.

use ragloom_core::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

/// A message between steps. Events are serialisable so that a run's queued
/// and in-flight events can be checkpointed and loaded in another process.
///
/// ```
/// use ragloom_workflow::Event;
/// #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
/// struct Retrieved { passages: Vec<String> }
/// impl Event for Retrieved {}
/// assert_eq!(<Retrieved as Event>::name(), "Retrieved");
/// ```
pub trait Event: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static {
    /// The name the event has in checkpoints, drawings and errors: the type's
    /// own name by default. Two event types of one workflow may not share it.
    fn name() -> String {
        short_type_name(std::any::type_name::<Self>())
    }
}

/// `a::b::Foo<c::Bar>` → `Foo<Bar>`.
fn short_type_name(full: &str) -> String {
    let mut out = String::new();
    let mut segment = String::new();
    for c in full.chars() {
        match c {
            ':' => segment.clear(),
            '<' | '>' | ',' | ' ' | '(' | ')' | '[' | ']' | ';' | '&' => {
                out.push_str(&segment);
                segment.clear();
                out.push(c);
            }
            _ => segment.push(c),
        }
    }
    out.push_str(&segment);
    out
}

/// An event type as the runtime knows it: its name, and how to load it from
/// a checkpoint's JSON.
#[derive(Clone)]
pub struct EventType {
    id: TypeId,
    name: Arc<str>,
    decode: fn(Value) -> Result<AnyEvent>,
}

impl EventType {
    /// The type of `E`.
    pub fn of<E: Event>() -> Self {
        Self {
            id: TypeId::of::<E>(),
            name: E::name().into(),
            decode: |v| Ok(AnyEvent::new(serde_json::from_value::<E>(v)?)),
        }
    }

    /// The event's name ([`Event::name`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `ev` is of this type.
    pub fn matches(&self, ev: &AnyEvent) -> bool {
        ev.type_id() == self.id
    }

    pub(crate) fn decode(&self, value: Value) -> Result<AnyEvent> {
        (self.decode)(value)
    }
}

impl PartialEq for EventType {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for EventType {}

impl std::hash::Hash for EventType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl fmt::Debug for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

trait ErasedEvent: Send + Sync + fmt::Debug {
    fn as_any(&self) -> &dyn Any;
    fn to_json(&self) -> Result<Value>;
    fn event_type(&self) -> EventType;
}

impl<E: Event> ErasedEvent for E {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn to_json(&self) -> Result<Value> {
        Ok(serde_json::to_value(self)?)
    }
    fn event_type(&self) -> EventType {
        EventType::of::<E>()
    }
}

/// Any event, as the runtime routes it. Cheap to clone (shared).
#[derive(Clone)]
pub struct AnyEvent(Arc<dyn ErasedEvent>);

impl AnyEvent {
    /// Wraps `ev`.
    pub fn new<E: Event>(ev: E) -> Self {
        Self(Arc::new(ev))
    }

    /// The event's type.
    pub fn event_type(&self) -> EventType {
        self.0.event_type()
    }

    /// The event's name ([`Event::name`]).
    pub fn name(&self) -> String {
        self.event_type().name().to_string()
    }

    /// Whether it is an `E`.
    pub fn is<E: Event>(&self) -> bool {
        self.type_id() == TypeId::of::<E>()
    }

    /// The event as an `E`, if it is one.
    pub fn downcast_ref<E: Event>(&self) -> Option<&E> {
        self.0.as_any().downcast_ref::<E>()
    }

    /// A copy of the event as an `E`, if it is one.
    pub fn downcast<E: Event>(&self) -> Option<E> {
        self.downcast_ref::<E>().cloned()
    }

    /// `{"type": name, "value": fields}`: how checkpoints store an event.
    pub fn to_json(&self) -> Result<Value> {
        Ok(serde_json::json!({"type": self.name(), "value": self.0.to_json()?}))
    }

    fn type_id(&self) -> TypeId {
        self.0.as_any().type_id()
    }
}

impl fmt::Debug for AnyEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: Event> From<E> for AnyEvent {
    fn from(ev: E) -> Self {
        AnyEvent::new(ev)
    }
}

/// The event types a workflow can load from a checkpoint, by name.
#[derive(Clone, Debug, Default)]
pub struct EventRegistry {
    types: Vec<EventType>,
}

impl EventRegistry {
    /// Adds `ty`; a second type with the same name is an error (a checkpoint
    /// could not tell them apart).
    pub fn register(&mut self, ty: EventType) -> Result<()> {
        match self.types.iter().find(|t| t.name() == ty.name()) {
            Some(t) if *t == ty => Ok(()),
            Some(_) => Err(Error::InvalidInput(format!(
                "two event types are named `{}`; give one another name (Event::name)",
                ty.name()
            ))),
            None => {
                self.types.push(ty);
                Ok(())
            }
        }
    }

    /// The registered type named `name`.
    pub fn get(&self, name: &str) -> Option<&EventType> {
        self.types.iter().find(|t| t.name() == name)
    }

    /// Loads an event stored by [`AnyEvent::to_json`].
    pub fn decode(&self, json: &Value) -> Result<AnyEvent> {
        let name = json
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::InvalidInput(format!("a stored event has no `type`: {json}")))?;
        let ty = self.get(name).ok_or_else(|| {
            Error::InvalidInput(format!(
                "a checkpoint holds an event `{name}` this workflow does not know; \
                 register it with WorkflowBuilder::event"
            ))
        })?;
        ty.decode(json.get("value").cloned().unwrap_or(Value::Null))
            .map_err(|e| Error::invalid(format!("stored event `{name}`"), e))
    }
}

/// What starts a run: the keyword arguments of `workflow.run(...)` as fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StartEvent(pub Map<String, Value>);

impl StartEvent {
    /// An empty start event.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the field `key`.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.0.insert(key.to_string(), value);
        self
    }

    /// The field `key`, read as a `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<T> {
        let v = self
            .0
            .get(key)
            .ok_or_else(|| Error::InvalidInput(format!("the start event has no field `{key}`")))?;
        serde_json::from_value(v.clone())
            .map_err(|e| Error::invalid(format!("start event field `{key}`"), e))
    }
}
impl Event for StartEvent {}

/// What ends a run: its result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StopEvent {
    /// The run's result.
    pub result: Value,
}

impl StopEvent {
    /// Ends the run with `result`.
    pub fn new(result: impl Serialize) -> Self {
        Self {
            result: serde_json::to_value(result).unwrap_or(Value::Null),
        }
    }
}
impl Event for StopEvent {}

/// Written to the stream when a step waits for a person ([`Context::wait_for_event`](super::Context::wait_for_event)).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InputRequiredEvent {
    /// What is asked, and anything else the caller needs to answer.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl InputRequiredEvent {
    /// Asks `prefix` (the field Python's examples use).
    pub fn new(prefix: &str) -> Self {
        let mut fields = Map::new();
        fields.insert("prefix".into(), Value::String(prefix.into()));
        Self { fields }
    }
}
impl Event for InputRequiredEvent {}

/// A person's answer, sent into the run with `handler.send_event(...)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HumanResponseEvent {
    /// The answer.
    pub response: String,
    /// Anything else sent with it.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl HumanResponseEvent {
    /// The answer `response`.
    pub fn new(response: impl Into<String>) -> Self {
        Self {
            response: response.into(),
            fields: Map::new(),
        }
    }
}
impl Event for HumanResponseEvent {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
    struct Ping {
        n: u32,
    }
    impl Event for Ping {}

    #[test]
    fn names_are_short_type_names() {
        assert_eq!(short_type_name("a::b::Foo"), "Foo");
        assert_eq!(short_type_name("a::Foo<b::Bar, c::Baz>"), "Foo<Bar, Baz>");
        assert_eq!(<Ping as Event>::name(), "Ping");
        assert_eq!(<StopEvent as Event>::name(), "StopEvent");
    }

    #[test]
    fn events_round_trip_through_the_registry() {
        let mut reg = EventRegistry::default();
        reg.register(EventType::of::<Ping>()).unwrap();
        reg.register(EventType::of::<Ping>()).unwrap();
        let json = AnyEvent::new(Ping { n: 3 }).to_json().unwrap();
        assert_eq!(json, serde_json::json!({"type": "Ping", "value": {"n": 3}}));
        let back = reg.decode(&json).unwrap();
        assert_eq!(back.downcast::<Ping>(), Some(Ping { n: 3 }));
        assert!(!back.is::<StopEvent>());
        let err = reg
            .decode(&serde_json::json!({"type": "Pong"}))
            .unwrap_err();
        assert!(err.to_string().contains("`Pong`"), "{err}");
    }

    #[test]
    fn two_types_with_one_name_are_refused() {
        mod other {
            #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
            pub(crate) struct Ping;
            impl super::Event for Ping {}
        }
        let mut reg = EventRegistry::default();
        reg.register(EventType::of::<Ping>()).unwrap();
        let err = reg.register(EventType::of::<other::Ping>()).unwrap_err();
        assert!(err.to_string().contains("two event types are named `Ping`"));
    }
}

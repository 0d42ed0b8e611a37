//! `GoogleCalendarToolSpec`: read upcoming events, create one, tell the
//! date, with LlamaIndex's function names, arguments and answers.

use crate::api::GoogleApi;
use crate::metadata;
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Local, NaiveDate};
use ragloom_common_oauth::OAuthCredentials;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::Document;
use ragloom_core::tools::{
    SpecFunctions, Tool, ToolArgs, ToolSpec, documents_output, spec_function_tools,
    unknown_function,
};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;

/// The scope LlamaIndex asks for.
pub const CALENDAR_SCOPES: [&str; 1] = ["https://www.googleapis.com/auth/calendar"];

/// Google Calendar's API.
pub const CALENDAR_ENDPOINT: &str = "https://www.googleapis.com/calendar/v3/";

/// What `create_event` answers (LlamaIndex's text).
pub const EVENT_CREATED: &str =
    "Your calendar event has been created successfully! You can move on to the next step.";

/// Calendar pages hold at most this many events.
const PAGE_MAX: usize = 2500;

/// Google Calendar as agent tools (LlamaIndex `GoogleCalendarToolSpec`):
/// `load_data` (upcoming events of the primary calendar), `create_event`,
/// `get_date`.
#[derive(Clone, Debug)]
pub struct GoogleCalendarToolSpec {
    api: GoogleApi,
    max_results_limit: usize,
}

impl GoogleCalendarToolSpec {
    /// Tools over the calendar these credentials open.
    pub fn new(credentials: OAuthCredentials) -> Self {
        Self {
            api: GoogleApi::new("Google Calendar", CALENDAR_ENDPOINT, credentials),
            max_results_limit: PAGE_MAX,
        }
    }

    /// The most events one `load_data` reads, whatever the model asks (2,500).
    pub fn max_results_limit(mut self, n: usize) -> Self {
        self.max_results_limit = n.max(1);
        self
    }

    /// Events from midnight of `start_date` (an ISO date; today when
    /// `None`) in start order, recurring ones expanded, one document each:
    /// `Status: .., Summary: .., Start time: .., End time: .., Organizer: ..`.
    pub async fn load_data(
        &self,
        number_of_results: Option<usize>,
        start_date: Option<&str>,
    ) -> Result<Vec<Document>> {
        let start = match start_date {
            None => Local::now().date_naive(),
            Some(text) => parse_date(text)?,
        };
        // LlamaIndex writes local midnight with a `Z`: kept, so both ask the same.
        let time_min = format!("{}T00:00:00.000000Z", start.format("%Y-%m-%d"));
        let wanted = number_of_results.map(|n| n.min(self.max_results_limit));
        let mut events = Vec::new();
        let mut page_token: Option<String> = None;
        loop {
            let mut query = vec![("timeMin", time_min.clone())];
            if let Some(n) = wanted {
                query.push(("maxResults", (n - events.len()).min(PAGE_MAX).to_string()));
            }
            query.push(("singleEvents", "true".to_owned()));
            query.push(("orderBy", "startTime".to_owned()));
            if let Some(token) = &page_token {
                query.push(("pageToken", token.clone()));
            }
            let page = self
                .api
                .call(Method::GET, "calendars/primary/events", &query, None)
                .await?;
            let items = page.get("items").and_then(Value::as_array);
            // Each event becomes its line as its page arrives: pages are not kept.
            events.extend(items.into_iter().flatten().map(describe));
            page_token = page
                .get("nextPageToken")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty() && items.is_some_and(|i| !i.is_empty()))
                .map(str::to_owned);
            let full =
                wanted.is_some_and(|n| events.len() >= n) || events.len() >= self.max_results_limit;
            if page_token.is_none() || full {
                break;
            }
        }
        events.truncate(wanted.unwrap_or(self.max_results_limit));
        Ok(events.into_iter().map(Document::document).collect())
    }

    /// Creates an event on the primary calendar (LlamaIndex `create_event`).
    /// Times are ISO 8601 with a zone offset (`2026-12-09T10:00:00-05:00`).
    pub async fn create_event(&self, event: NewEvent) -> Result<String> {
        let start = parse_datetime("start_datetime", event.start_datetime.as_deref())?;
        let end = parse_datetime("end_datetime", event.end_datetime.as_deref())?;
        let attendees: Vec<Value> = event
            .attendees
            .unwrap_or_default()
            .into_iter()
            .map(|email| json!({ "email": email }))
            .collect();
        let body = json!({
            "summary": event.title,
            "location": event.location,
            "description": event.description,
            "start": { "dateTime": start.to_rfc3339() },
            "end": { "dateTime": end.to_rfc3339() },
            "attendees": attendees,
        });
        self.api
            .call(Method::POST, "calendars/primary/events", &[], Some(&body))
            .await?;
        Ok(EVENT_CREATED.to_owned())
    }

    /// Today's date, `YYYY-MM-DD`, on this machine's clock (LlamaIndex `get_date`).
    pub fn get_date(&self) -> String {
        Local::now().date_naive().format("%Y-%m-%d").to_string()
    }
}

/// An event to create: LlamaIndex's `create_event` arguments.
#[derive(Clone, Debug, Default)]
pub struct NewEvent {
    /// The title (`summary`).
    pub title: Option<String>,
    /// The description.
    pub description: Option<String>,
    /// Where.
    pub location: Option<String>,
    /// The start, ISO 8601 with a zone offset.
    pub start_datetime: Option<String>,
    /// The end, ISO 8601 with a zone offset.
    pub end_datetime: Option<String>,
    /// Addresses to invite.
    pub attendees: Option<Vec<String>>,
}

/// LlamaIndex's line for an event; a field the event lacks reads empty
/// (or `N/A` for the organizer, as LlamaIndex writes it) instead of failing.
fn describe(event: &Value) -> String {
    let text = |pointer: &str| event.pointer(pointer).and_then(Value::as_str);
    let when = |side: &str| {
        text(&format!("/{side}/dateTime"))
            .or_else(|| text(&format!("/{side}/date")))
            .unwrap_or_default()
    };
    let mut line = format!(
        "Status: {}, Summary: {}, Start time: {}, End time: {}, ",
        text("/status").unwrap_or_default(),
        text("/summary").unwrap_or_default(),
        when("start"),
        when("end"),
    );
    let email = text("/organizer/email").unwrap_or("N/A");
    match text("/organizer/displayName") {
        Some(name) if name != "N/A" => line.push_str(&format!("Organizer: {name} ({email})")),
        _ => line.push_str(&format!("Organizer: {email}")),
    }
    line
}

/// `date.fromisoformat`'s common forms: `2026-12-07` and `20261207`.
fn parse_date(text: &str) -> Result<NaiveDate> {
    let t = text.trim();
    NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(t, "%Y%m%d"))
        .map_err(|e| Error::invalid(format!("`{t}` is not an ISO date (YYYY-MM-DD)"), e))
}

fn parse_datetime(field: &str, text: Option<&str>) -> Result<DateTime<FixedOffset>> {
    let Some(text) = text.map(str::trim) else {
        return Err(Error::InvalidInput(format!(
            "`{field}` is required: an ISO 8601 time with its zone offset, e.g. 2026-12-09T10:00:00-05:00"
        )));
    };
    DateTime::parse_from_rfc3339(text)
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%z"))
        .map_err(|e| {
            Error::invalid(
                format!("`{field}` `{text}` is not an ISO 8601 time with a zone offset (e.g. 2026-12-09T10:00:00-05:00)"),
                e,
            )
        })
}

const FUNCTIONS: [&str; 3] = ["load_data", "create_event", "get_date"];

#[async_trait]
impl SpecFunctions for GoogleCalendarToolSpec {
    async fn call_function(&self, name: &str, args: &ToolArgs<'_>) -> Result<(String, Value)> {
        let text = |s: String| (s.clone(), Value::String(s));
        match name {
            "load_data" => {
                // 100 when the model says nothing; an explicit null asks for no limit
                // (up to the spec's), as Python drops a None parameter.
                let n = if args.has("number_of_results") {
                    args.opt_usize("number_of_results")?
                } else {
                    Some(100)
                };
                let start = args.opt_str("start_date")?;
                documents_output(&self.load_data(n, start.as_deref()).await?)
            }
            "create_event" => Ok(text(
                self.create_event(NewEvent {
                    title: args.opt_str("title")?,
                    description: args.opt_str("description")?,
                    location: args.opt_str("location")?,
                    start_datetime: args.opt_str("start_datetime")?,
                    end_datetime: args.opt_str("end_datetime")?,
                    attendees: args.opt_strings("attendees")?,
                })
                .await?,
            )),
            "get_date" => Ok(text(self.get_date())),
            other => Err(unknown_function(other)),
        }
    }
}

impl ToolSpec for GoogleCalendarToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        FUNCTIONS.iter().map(|n| (*n).to_owned()).collect()
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        spec_function_tools(self, &FUNCTIONS, |name| metadata("calendar", name))
    }
}

crate::api::api_settings!(GoogleCalendarToolSpec, "Calendar");

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn events_read_as_llama_index_writes_them_even_when_fields_are_missing() {
        let e = json!({"status": "confirmed", "summary": "Standup",
            "start": {"dateTime": "2026-12-08T09:00:00Z"}, "end": {"date": "2026-12-09"},
            "organizer": {"email": "me@example.com", "displayName": "Me"}});
        assert_eq!(
            describe(&e),
            "Status: confirmed, Summary: Standup, Start time: 2026-12-08T09:00:00Z, End time: 2026-12-09, Organizer: Me (me@example.com)"
        );
        assert_eq!(
            describe(&json!({})),
            "Status: , Summary: , Start time: , End time: , Organizer: N/A"
        );
        assert_eq!(
            describe(&json!(["not", "an", "event"])),
            describe(&json!({}))
        );
    }

    #[test]
    fn dates_and_times_are_checked() {
        assert_eq!(parse_date("2026-12-07").unwrap().to_string(), "2026-12-07");
        assert_eq!(parse_date("20261207").unwrap().to_string(), "2026-12-07");
        for bad in ["", "tomorrow", "2026-13-01", "2026-12-07T10:00"] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
        let t = parse_datetime("s", Some("2026-12-09T10:00:00-0500")).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-09T10:00:00-05:00");
        let t = parse_datetime("s", Some("2026-12-09T10:00:00Z")).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-09T10:00:00+00:00");
        assert!(parse_datetime("s", Some("2026-12-09T10:00:00")).is_err());
        assert!(
            parse_datetime("s", None)
                .unwrap_err()
                .to_string()
                .contains("required")
        );
    }
}

//! What every Ollama builder takes about the server — its address, the
//! request timeout, how long the model stays loaded — and their setters, written once.

use crate::connection::{Connection, OllamaHost, keep_alive_from_duration, parse_keep_alive};
use crate::wire::KeepAlive;
use ragloom_core::Error;
use std::time::Duration;

/// The server settings an Ollama builder holds (its `server` field).
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// The address given; `None`: `OLLAMA_HOST`, else `http://127.0.0.1:11434`.
    pub base_url: Option<String>,
    /// How long to wait to connect and for each piece of a reply; `None`: no limit.
    pub request_timeout: Option<Duration>,
    /// How long Ollama keeps the model loaded; `None`: the server's default.
    pub keep_alive: Option<KeepAlive>,
    /// A keep-alive text that did not parse, reported by `build`.
    pub keep_alive_error: Option<String>,
}

impl ServerOptions {
    /// Options with `request_timeout` and nothing else set.
    pub fn with_timeout(request_timeout: Option<Duration>) -> Self {
        Self {
            request_timeout,
            ..Self::default()
        }
    }

    /// Sets the keep-alive.
    pub fn set_keep_alive(&mut self, keep_alive: KeepAlive) {
        self.keep_alive = Some(keep_alive);
        self.keep_alive_error = None;
    }

    /// Sets the keep-alive from text; a bad value is kept for `connect` to report.
    pub fn set_keep_alive_str(&mut self, keep_alive: &str) {
        match parse_keep_alive(keep_alive) {
            Ok(k) => self.set_keep_alive(k),
            Err(e) => self.keep_alive_error = Some(e.to_string()),
        }
    }

    /// Sets the keep-alive as a duration (whole seconds, rounded up).
    pub fn set_keep_alive_duration(&mut self, keep_alive: Duration) {
        self.set_keep_alive(keep_alive_from_duration(keep_alive));
    }

    /// The server and a connection to it; a keep-alive text that did not
    /// parse is an error.
    pub fn connect(&self) -> Result<(OllamaHost, Connection), Error> {
        if let Some(e) = &self.keep_alive_error {
            return Err(Error::InvalidInput(e.clone()));
        }
        let host = match &self.base_url {
            Some(url) => OllamaHost::parse(url),
            None => OllamaHost::from_env(),
        };
        let conn = Connection::new(&host, self.request_timeout)?;
        Ok((host, conn))
    }
}

/// The server setters of a builder with a `server: ServerOptions` field:
/// `base_url`, `keep_alive`, `keep_alive_str`, `keep_alive_duration`.
#[macro_export]
macro_rules! server_option_setters {
    () => {
        /// The server address, read with `OLLAMA_HOST`'s rules (`host:port`,
        /// scheme optional). Default: `OLLAMA_HOST`, else `http://127.0.0.1:11434`.
        pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
            self.server.base_url = Some(base_url.into());
            self
        }

        /// How long Ollama keeps the model loaded after a request
        /// (`keep_alive`); unset leaves the server's default (5 minutes).
        pub fn keep_alive(mut self, keep_alive: $crate::KeepAlive) -> Self {
            self.server.set_keep_alive(keep_alive);
            self
        }

        /// [`Self::keep_alive`] from text: `"-1"` (forever), `"0"` (unload at
        /// once), seconds, or `30s` / `10m` / `2h`. A bad value fails [`Self::build`].
        pub fn keep_alive_str(mut self, keep_alive: &str) -> Self {
            self.server.set_keep_alive_str(keep_alive);
            self
        }

        /// [`Self::keep_alive`] as a duration (whole seconds, rounded up).
        pub fn keep_alive_duration(mut self, keep_alive: std::time::Duration) -> Self {
            self.server.set_keep_alive_duration(keep_alive);
            self
        }
    };
}

//! Wikipedia for ragloom, as LlamaIndex's `llama-index-tools-wikipedia` and
//! `llama-index-readers-wikipedia`: [`WikipediaToolSpec`] (`load_data`,
//! `search_data`) for agents, [`WikipediaReader`] for indexes, both over
//! [`WikipediaClient`], the MediaWiki API as the `wikipedia` package calls it.
//!
//! Every request goes to the configured API only: a language is checked
//! before it becomes part of the host name, replies are capped in size and
//! time, and redirects between pages are followed at most five times.

#![warn(missing_docs)]

mod client;
mod reader;
mod tool;

pub use client::{WikipediaClient, WikipediaPage};
pub use reader::WikipediaReader;
pub use tool::{
    LOAD_DATA_DESCRIPTION, NO_SEARCH_RESULTS, PAGE_NOT_FOUND, SEARCH_DATA_DESCRIPTION,
    WikipediaToolSpec,
};

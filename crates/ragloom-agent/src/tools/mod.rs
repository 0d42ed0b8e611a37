//! Tools that load data when a model asks: `OnDemandLoaderTool` reads,
//! indexes and queries in one call; `LoadAndSearchToolSpec` splits that into a load and a read tool.

pub mod load_and_search;
pub mod ondemand_loader;

pub use load_and_search::LoadAndSearchToolSpec;
pub use ondemand_loader::{FnLoader, LoadArgsReader, OnDemandLoaderTool, ReaderLoader, ToolLoader};

//! Loads a folder of mixed files (PDF, DOCX, CSV, EPUB, Markdown, HTML,
//! JSON, text) with the file readers registered, and reports what loaded
//! and what could not be read.
//!
//! ```sh
//! cargo run -p ragloom-examples --features file-readers --example file_readers -- path/to/folder
//! ```
//!
//! With no argument it reads the file-readers crate's test fixtures, which
//! include a truncated PDF and one that makes the PDF parser panic: both are
//! reported as those files' errors while the other files load.

use ragloom::file_readers::SimpleDirectoryReaderExt;
use ragloom::readers::SimpleDirectoryReader;
use std::path::PathBuf;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let folder = match std::env::args_os().nth(1) {
        Some(arg) => PathBuf::from(arg),
        None => {
            let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../integrations/readers/file/tests/data");
            fixtures.canonicalize().unwrap_or(fixtures)
        }
    };
    if !folder.is_dir() {
        eprintln!(
            "{} is not a folder. Usage: cargo run -p ragloom-examples --features file-readers --example file_readers -- <folder>",
            folder.display()
        );
        return ExitCode::from(2);
    }

    // Markdown, HTML and JSON are parsed too; `with_default_file_extractors()`
    // would register only what LlamaIndex registers (PDF, DOCX, CSV, EPUB).
    let report = match SimpleDirectoryReader::new(&folder)
        .with_all_file_extractors()
        .load_data_with_report()
        .await
    {
        Ok(report) => report,
        Err(e) => {
            eprintln!("could not read {}: {e}", folder.display());
            return ExitCode::FAILURE;
        }
    };

    println!(
        "{} documents from {}",
        report.documents.len(),
        folder.display()
    );
    for doc in &report.documents {
        let name = doc
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let label = doc
            .metadata
            .get("page_label")
            .and_then(|v| v.as_str())
            .map(|p| format!(" (page {p})"))
            .unwrap_or_default();
        let preview: String = doc.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let preview: String = preview.chars().take(70).collect();
        println!("  {name}{label}: {preview}");
    }
    if !report.errors.is_empty() {
        println!("{} files could not be read:", report.errors.len());
        for (path, error) in &report.errors {
            println!("  {}: {error}", path.display());
        }
    }
    ExitCode::SUCCESS
}

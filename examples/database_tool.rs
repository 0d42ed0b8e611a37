//! DatabaseToolSpec: a SQLite database as three agent tools (`load_data`,
//! `describe_tables`, `list_tables`), read-only by default.
//!
//! ```sh
//! cargo run -p ragloom-examples --features tools-database --example database_tool [path/to/file.sqlite]
//! ```
//!
//! With no path (or `RAGLOOM_EXAMPLE_SQLITE` unset) it builds a small demo
//! database in a temporary folder, then opens it read-only as a model would use it.

use ragloom::tools::ToolSpec;
use ragloom::tools_database::DatabaseToolSpec;
use serde_json::json;
use std::path::PathBuf;

#[tokio::main]
async fn main() -> ragloom::Result<()> {
    let given = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("RAGLOOM_EXAMPLE_SQLITE").ok())
        .map(PathBuf::from);
    let demo_dir =
        std::env::temp_dir().join(format!("ragloom-database-tool-{}", std::process::id()));
    let path = match given {
        Some(path) => {
            if !path.exists() {
                eprintln!(
                    "No SQLite file at {}; pass an existing file, or nothing for the demo database.",
                    path.display()
                );
                std::process::exit(2);
            }
            path
        }
        None => {
            std::fs::create_dir_all(&demo_dir).map_err(|e| {
                ragloom::Error::InvalidInput(format!("creating {}: {e}", demo_dir.display()))
            })?;
            let path = demo_dir.join("demo.sqlite");
            let _ = std::fs::remove_file(&path);
            // Trusted setup SQL; the model's SQL goes through the tools' guards.
            ragloom::sql::run_sqlite_script(
                &path,
                "CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                 CREATE TABLE books (id INTEGER PRIMARY KEY, author_id INTEGER REFERENCES authors(id), title TEXT, year INTEGER);
                 INSERT INTO authors VALUES (1, 'Lewis Carroll'), (2, 'William Shakespeare');
                 INSERT INTO books VALUES (1, 1, 'Alice''s Adventures in Wonderland', 1865), (2, 2, 'As You Like It', 1623);",
            )?;
            println!("Built a demo database at {}", path.display());
            path
        }
    };

    let spec = DatabaseToolSpec::open(&path)?;
    let tools = spec.to_tool_list();
    for tool in &tools {
        let first_line = tool
            .metadata()
            .description
            .lines()
            .next()
            .unwrap_or_default();
        println!("tool: {first_line}");
    }
    let calls = [
        ("list_tables", json!({})),
        ("describe_tables", json!({"tables": null})),
        (
            "load_data",
            json!({"query": "SELECT b.title, a.name AS author, b.year FROM books b JOIN authors a ON a.id = b.author_id ORDER BY b.year"}),
        ),
        // Refused: the database is read-only, and the model is told why.
        ("load_data", json!({"query": "DELETE FROM books"})),
    ];
    for (name, args) in calls {
        let Some(tool) = tools.iter().find(|t| t.name() == name) else {
            continue;
        };
        let out = tool.call(args.clone()).await?;
        println!(
            "\n{name}({args}){}:\n{}",
            if out.is_error { " [error]" } else { "" },
            out.content
        );
    }
    let _ = std::fs::remove_dir_all(&demo_dir);
    Ok(())
}

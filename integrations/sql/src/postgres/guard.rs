//! What a model's PostgreSQL statement may be before it is sent: its words
//! read as PostgreSQL reads them (strings, quoted names, comments skipped).
//! The read-only transaction, the plan's tables and the time limit do the rest.

/// The statement's first word must be one of these (more with writes on).
const READ_STARTS: &[&str] = &["select", "with", "values", "table"];
const WRITE_STARTS: &[&str] = &["insert", "update", "delete", "merge"];

/// Names a statement may not use: PostgreSQL's own `pg_` functions and
/// catalogues (reading server files, other sessions' queries, settings,
/// locks, replication) but for a few harmless ones, and functions that run
/// other SQL (which no plan check would see), change settings, or reach
/// large objects and other servers.
const DENIED_PREFIXES: &[&str] = &[
    "pg_",
    "lo_",
    "dblink",
    "set_config",
    "current_setting",
    "query_to_xml",
    "cursor_to_xml",
    "table_to_xml",
    "schema_to_xml",
    "database_to_xml",
    "txid_",
    "binary_upgrade_",
    "brin_",
    "gin_clean_pending_list",
    // Text search statistics and rewriting run the query text they are given.
    "ts_stat",
    "ts_rewrite",
    // tablefunc's crosstab and connectby run query text too.
    "crosstab",
    "connectby",
];

/// `pg_` functions a query may use: `pg_sleep` is bounded by the time limit.
const ALLOWED_PG: &[&str] = &[
    "pg_sleep",
    "pg_typeof",
    "pg_column_size",
    "pg_size_pretty",
    "pg_size_bytes",
];

/// A word of the statement: a name (unquoted ones lower-cased, as
/// PostgreSQL folds them) or `;`.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Semicolon(usize),
    /// `U&"..."` or `U&'...'`: escapes the word check could not read.
    UnicodeEscape,
    /// `E'...'`: a string whose escapes carry over into a continuation
    /// string on the next line, which the word check does not follow.
    EscapeString,
    Other,
}

/// Splits `sql` into the tokens the guard reads. Unterminated strings,
/// names or comments end the statement (PostgreSQL will refuse it).
fn tokens(sql: &str) -> Vec<Token> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = sql[i..].find('\n').map_or(bytes.len(), |n| i + n + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                // Block comments nest in PostgreSQL.
                let mut depth = 0usize;
                while i < bytes.len() {
                    if bytes[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if bytes[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'\'' => {
                i = end_of_quoted(bytes, i + 1, b'\'', false);
                out.push(Token::Other);
            }
            b'"' => {
                let end = end_of_quoted(bytes, i + 1, b'"', false);
                let name = sql[i + 1..end.saturating_sub(1).max(i + 1)].replace("\"\"", "\"");
                out.push(Token::Word(name));
                i = end;
            }
            b'$' => match dollar_tag(sql, i) {
                Some(tag) => {
                    let body = i + tag.len();
                    i = sql[body..]
                        .find(tag)
                        .map_or(bytes.len(), |n| body + n + tag.len());
                    out.push(Token::Other);
                }
                None => {
                    i += 1;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                    out.push(Token::Other);
                }
            },
            b';' => {
                out.push(Token::Semicolon(i));
                i += 1;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric()
                        || bytes[i] == b'_'
                        || bytes[i] == b'$'
                        || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                if i - start == 1
                    && matches!(bytes[start], b'u' | b'U')
                    && matches!(bytes.get(i..i + 2), Some(b"&\"") | Some(b"&'"))
                {
                    out.push(Token::UnicodeEscape);
                    continue;
                }
                // `E'...'` (whose backslash escapes a quote too), `B'...'`,
                // `X'...'`: a string with a prefix, not a name.
                if bytes.get(i) == Some(&b'\'') && i - start == 1 {
                    let escapes = matches!(bytes[start], b'e' | b'E');
                    i = end_of_quoted(bytes, i + 1, b'\'', escapes);
                    out.push(if escapes {
                        Token::EscapeString
                    } else {
                        Token::Other
                    });
                    continue;
                }
                out.push(Token::Word(sql[start..i].to_ascii_lowercase()));
            }
            _ if c.is_ascii_whitespace() => i += 1,
            _ => {
                out.push(Token::Other);
                i += 1;
            }
        }
    }
    out
}

/// The index just past the closing `quote` (a doubled quote is one
/// character of the string), or the end.
fn end_of_quoted(bytes: &[u8], mut i: usize, quote: u8, escapes: bool) -> usize {
    while i < bytes.len() {
        if escapes && bytes[i] == b'\\' {
            i += 2;
        } else if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// `$tag$` or `$$` starting at `i`, if one does.
fn dollar_tag(sql: &str, i: usize) -> Option<&str> {
    let rest = &sql[i + 1..];
    let end = rest.find('$')?;
    let tag = &rest[..end];
    let valid = tag
        .chars()
        .enumerate()
        .all(|(n, c)| c == '_' || c.is_alphabetic() || (n > 0 && c.is_ascii_digit()));
    valid.then(|| &sql[i..i + end + 2])
}

/// The statement as it will run (a trailing `;` and what follows it cut),
/// or why it may not run.
pub(crate) fn check(sql: &str, writable: bool) -> Result<&str, String> {
    let tokens = tokens(sql);
    let Some(first) = tokens.iter().find(|t| !matches!(t, Token::Semicolon(_))) else {
        return Err("it holds no SQL statement".into());
    };
    // One statement: only `;` may follow the first `;`.
    let mut end = sql.len();
    if let Some(pos) = tokens.iter().position(|t| matches!(t, Token::Semicolon(_))) {
        let before = tokens[..pos]
            .iter()
            .any(|t| !matches!(t, Token::Semicolon(_)));
        let after = tokens[pos..]
            .iter()
            .any(|t| !matches!(t, Token::Semicolon(_)));
        if before && after {
            return Err("it holds more than one statement; send one statement".into());
        }
        if let Token::Semicolon(at) = tokens[pos] {
            end = at;
        }
    }
    // PostgreSQL ends a `--` comment at a carriage return too, and reads
    // other control characters as space: the words are only read as it
    // reads them with none of those.
    if sql
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err("it holds control characters (only newlines and tabs are allowed)".into());
    }
    if tokens.contains(&Token::UnicodeEscape) {
        return Err("Unicode-escaped names and strings (U&) are not allowed here".into());
    }
    if tokens.contains(&Token::EscapeString) {
        return Err("escape strings (E'...') are not allowed here; write a plain string".into());
    }
    let Token::Word(first) = first else {
        return Err("it does not start with SELECT, WITH, VALUES or TABLE".into());
    };
    let reads = READ_STARTS.contains(&first.as_str());
    let writes = WRITE_STARTS.contains(&first.as_str());
    if !(reads || writable && writes) {
        return Err(if writes {
            "only statements that read may run: the database is open read-only".into()
        } else {
            format!(
                "{} statements are not allowed here (only SELECT, WITH, VALUES or TABLE{})",
                first.to_ascii_uppercase(),
                if writable {
                    ", INSERT, UPDATE, DELETE or MERGE"
                } else {
                    ""
                }
            )
        });
    }
    let words: Vec<&str> = tokens
        .iter()
        .filter_map(|t| match t {
            Token::Word(w) => Some(w.as_str()),
            _ => None,
        })
        .collect();
    for (n, word) in words.iter().enumerate() {
        if DENIED_PREFIXES.iter().any(|p| word.starts_with(p)) && !ALLOWED_PG.contains(word) {
            return Err(format!("it names `{word}`, a function not allowed here"));
        }
        // `SELECT ... INTO t` creates a table; `INSERT INTO` and `MERGE INTO` are writes.
        if *word == "into"
            && !matches!(n.checked_sub(1).map(|p| words[p]), Some("insert" | "merge"))
        {
            return Err("SELECT ... INTO creates a table, which is not allowed here".into());
        }
    }
    Ok(sql[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pass_and_the_trailing_semicolon_goes() {
        assert_eq!(check("SELECT 1;", false), Ok("SELECT 1"));
        assert_eq!(
            check("select 'a;b' -- c;\n", false),
            Ok("select 'a;b' -- c;")
        );
        assert_eq!(
            check("WITH x AS (SELECT 1) SELECT * FROM x ;  ", false),
            Ok("WITH x AS (SELECT 1) SELECT * FROM x")
        );
        assert_eq!(check("SELECT $q$;drop$q$", false), Ok("SELECT $q$;drop$q$"));
        assert!(check("SELECT E'\\';' ", false).is_err());
        assert!(check("SELECT pg_sleep(600)", false).is_ok());
    }

    #[test]
    fn the_hostile_kinds_are_refused() {
        for sql in [
            "",
            " ; -- nothing",
            "SELECT 1; DROP TABLE t",
            "SELECT 1 /* a /* nested */ comment */; DELETE FROM t",
            "DROP TABLE customers",
            "UPDATE t SET a = 1",
            "COPY t TO PROGRAM 'sh'",
            "SET statement_timeout = 0",
            "SELECT pg_read_file('/etc/passwd')",
            "SELECT \"pg_read_file\"('/etc/passwd')",
            "SELECT PG_LS_DIR('.')",
            "SELECT query_to_xml('select * from secret', true, true, '')",
            "SELECT set_config('statement_timeout', '0', false)",
            "SELECT pg_advisory_lock(1)",
            "SELECT * INTO copy FROM customers",
            "SELECT dblink_exec('x', 'drop table t')",
            "SELECT lo_export(1, '/tmp/x')",
            "SELECT * FROM pg_stat_get_activity(NULL)",
            "SELECT word FROM ts_stat('SELECT to_tsvector(actor) FROM public.audit_log')",
            "SELECT E''\n'\\'', query_to_xml('select 1', true, false, '') --'",
            "SELECT 1 --\r, pg_read_file('/etc/hostname')",
            "SELECT 1 --\u{c}\n, 2",
            "SELECT U&\"pg\\005fread\\005ffile\"('/etc/passwd')",
            "SELECT * FROM pg_show_all_settings()",
            "SELECT * FROM pg_catalog.pg_hba_file_rules",
        ] {
            assert!(check(sql, false).is_err(), "{sql:?} passed");
        }
        assert!(check("UPDATE t SET a = 1", true).is_ok());
        assert!(check("INSERT INTO t VALUES (1)", true).is_ok());
        assert!(check("SELECT 1 INTO t", true).is_err());
    }
}

//! A PostgreSQL error as the model reads it: the server's message with
//! libpq's `LINE 1: ...` excerpt and caret, `DETAIL:` and `HINT:` lines.

use crate::limits::StatementError;
use ragloom_core::error::{Error, Result};
use sqlx::postgres::{PgDatabaseError, PgErrorPosition};
use std::time::Duration;

/// Screen columns of the excerpt, and how far from its end the caret stays
/// (libpq's choices).
const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// A statement's failure; an error of the connection rather than of the
/// statement stays an [`Error`].
pub(crate) fn statement_error(
    e: sqlx::Error,
    statement: &str,
    timeout: Duration,
) -> Result<StatementError> {
    let sqlx::Error::Database(db) = &e else {
        return Err(Error::provider(super::PROVIDER, "running the statement", e));
    };
    let Some(pg) = db.try_downcast_ref::<PgDatabaseError>() else {
        return Err(Error::provider(super::PROVIDER, "running the statement", e));
    };
    let owned = statement.to_owned();
    Ok(match pg.code() {
        // query_canceled: the statement timeout.
        "57014" => StatementError::TimedOut {
            statement: owned,
            after: timeout,
        },
        "25006" => StatementError::Refused {
            statement: owned,
            reason: "only statements that read may run: the transaction is read-only".into(),
        },
        "42601" if pg.message().contains("multiple commands") => StatementError::Refused {
            statement: owned,
            reason: "it holds more than one statement; send one statement".into(),
        },
        _ => StatementError::Invalid {
            message: message(pg, statement),
            statement: owned,
        },
    })
}

/// The text psycopg2 shows for a server error: message, excerpt, detail, hint.
fn message(pg: &PgDatabaseError, statement: &str) -> String {
    let mut out = format!("{}\n", pg.message());
    if let Some(PgErrorPosition::Original(at)) = pg.position() {
        out.push_str(&excerpt(statement, at));
    }
    if let Some(detail) = pg.detail() {
        out.push_str(&format!("DETAIL:  {detail}\n"));
    }
    if let Some(hint) = pg.hint() {
        out.push_str(&format!("HINT:  {hint}\n"));
    }
    out
}

/// Screen columns of a character (East Asian wide characters take two).
fn width(c: char) -> usize {
    let c = u32::from(c);
    let wide = matches!(c,
        0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x1F300..=0x1F64F
        | 0x20000..=0x3FFFD);
    if wide { 2 } else { 1 }
}

/// libpq's `LINE n: ...` and caret for a 1-based character position.
fn excerpt(statement: &str, position: usize) -> String {
    let Some(loc) = position.checked_sub(1) else {
        return String::new();
    };
    let chars: Vec<char> = statement
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let mut line = 1;
    let mut begin = 0;
    let mut end = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\r' || c == '\n' {
            if i < loc {
                if c == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line += 1;
                }
                begin = i + 1;
            } else {
                end = i;
                break;
            }
        }
    }
    if loc > chars.len() {
        return String::new();
    }
    // The screen column where each character starts, up to `end`.
    let mut column = Vec::with_capacity(end + 1);
    let mut at = 0;
    for &c in &chars[..end] {
        column.push(at);
        at += width(c);
    }
    column.push(at);
    let (mut begin_cut, mut end_cut) = (false, false);
    if column[end] - column[begin] > DISPLAY_SIZE {
        if column[begin] + DISPLAY_SIZE >= column[loc] + MIN_RIGHT_CUT {
            while column[end] - column[begin] > DISPLAY_SIZE {
                end -= 1;
            }
            end_cut = true;
        } else {
            while column[loc] + MIN_RIGHT_CUT < column[end] {
                end -= 1;
                end_cut = true;
            }
            while column[end] - column[begin] > DISPLAY_SIZE {
                begin += 1;
                begin_cut = true;
            }
        }
    }
    let prefix = format!("LINE {line}: {}", if begin_cut { "..." } else { "" });
    let text: String = chars[begin..end].iter().collect();
    let caret = prefix.chars().map(width).sum::<usize>() + column[loc] - column[begin];
    format!(
        "{prefix}{text}{}\n{}^\n",
        if end_cut { "..." } else { "" },
        " ".repeat(caret)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_follow_libpq() {
        assert_eq!(
            excerpt("SELECT nope FROM shop.customers", 8),
            "LINE 1: SELECT nope FROM shop.customers\n               ^\n"
        );
        assert_eq!(
            excerpt(
                "SELECT EXTRACT(YEAR FROM shop.joined) FROM shop.customers WHERE id = 1",
                26
            ),
            "LINE 1: SELECT EXTRACT(YEAR FROM shop.joined) FROM shop.customers WH...\n                                 ^\n"
        );
        assert_eq!(
            excerpt("SELECT 1\nFROM x", 10),
            "LINE 2: FROM x\n        ^\n"
        );
    }
}

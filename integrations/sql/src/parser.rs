//! The SQL in a model's reply, read as LlamaIndex's `DefaultSQLParser` reads
//! it: after `SQLQuery:`, before `SQLResult:`, code fences dropped.

/// LlamaIndex's `DefaultSQLParser.parse_response_to_sql`.
pub fn parse_response_to_sql(response: &str) -> String {
    let mut sql = response;
    if let Some(start) = sql.find("SQLQuery:") {
        sql = &sql[start + "SQLQuery:".len()..];
    }
    if let Some(end) = sql.find("SQLResult:") {
        sql = &sql[..end];
    }
    let sql = sql.replace("```sql", "").replace("```", "");
    ragloom_core::schema::py_strip(&sql).to_owned()
}

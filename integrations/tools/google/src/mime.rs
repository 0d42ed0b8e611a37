//! Builds the bytes of a plain-text email draft exactly as CPython 3.11's `email` package does
//! for LlamaIndex's Gmail tool (`EmailMessage`: `set_content`, `To`, `Subject`, `as_bytes`).

use std::collections::{HashMap, VecDeque};
use std::ops::Deref;
use std::rc::Rc;

/// `max_line_length` of Python's default policy, for headers and body alike.
const MAXLEN: usize = 78;
const SPECIALS: &str = "()<>@,:;.\\\"[]";
const MAX_COMMENT_DEPTH: usize = 100;
/// The fixed part of an encoded word: `=?utf-8?q?` and `?=`.
const EW_CHROME: usize = 12;

/// What Python's EmailMessage gives for set_content(message), To, Subject.
///
/// Python parses header values into token trees and folds them with `_refold_parse_tree`;
/// both are ported rule for rule, since display names, encoded words and folding (quirks
/// included) all follow from the tree shape. Like Python with a list, `to` is joined with
/// ", " and parsed as one address list. `None` is Python's `to=None` (LlamaIndex's default
/// when the model names no recipient), which Python writes as the literal header
/// `To: None`; an empty list gives a bare `To:`, as Python's `[]`. A `None` subject gives a
/// bare `Subject:`, as Python does.
///
/// # Errors
/// Where Python raises (a subject with a line break, `<` or `a@` as an address, ...), with
/// the exception named, and where Python would write a line break into a header (below).
///
/// # Known differences from Python (each gives a valid message or an `Err`)
/// - Any CR or LF in a header value is refused. Python raises for most, but writes a `To`
///   item with a line break, a subject ending in one, or an encoded word decoding to one
///   straight into the header, injecting headers or ending the header block early.
/// - Encoded words (`=?cs?q?...?=`) in the input are decoded only for utf-8, us-ascii and
///   latin-1 (other charsets only when the bytes are ASCII) and only from strict base64;
///   the rest stay literal text. Python decodes every codec it has, and then often raises.
/// - Comments nested over 100 deep are refused; Python recurses until `RecursionError`.
pub fn build_message(
    to: Option<&[String]>,
    subject: Option<&str>,
    message: &str,
) -> Result<Vec<u8>, String> {
    if to.into_iter().flatten().any(|a| a.contains(['\r', '\n'])) {
        return Err("a To address contains a line break (CR or LF)".to_owned());
    }
    let subject = subject.unwrap_or("");
    if subject.contains(['\r', '\n']) || splits_into_lines(subject) {
        return Err(
            "Header values may not contain linefeed or carriage return characters".to_owned(),
        );
    }
    let to = match to {
        None => "None".to_owned(),
        Some(list) => list.join(", "),
    };
    let addresses = get_address_list(&Val::new(&to)).map_err(|e| raised("To", e))?;
    let to_line = fold_header("To", addresses)?;
    let subject_line = fold_header("Subject", get_unstructured(Val::new(subject)))?;
    let (cte, body) = encode_body(message.as_bytes());
    let mut out = format!(
        "Content-Type: text/plain; charset=\"utf-8\"\nContent-Transfer-Encoding: {cte}\n\
         MIME-Version: 1.0\n{to_line}{subject_line}\n"
    )
    .into_bytes();
    out.extend(body);
    Ok(out)
}

/// Python refuses a str header value when `str.splitlines()` yields more than one line.
fn splits_into_lines(s: &str) -> bool {
    let is_break = |c| {
        matches!(
            c,
            '\n' | '\r' | '\x0b' | '\x0c' | '\x1c'..='\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
    };
    s.char_indices()
        .find(|&(_, c)| is_break(c))
        .is_some_and(|(i, c)| {
            let len = if s[i..].starts_with("\r\n") {
                2
            } else {
                c.len_utf8()
            };
            i + len < s.len()
        })
}

// ---------------------------------------------------------------- body

/// Mirrors `contentmanager._encode_text` for utf-8 text under the default policy.
fn encode_body(text: &[u8]) -> (&'static str, Vec<u8>) {
    let lines = byte_lines(text);
    let body = join_lines(&lines);
    if lines.iter().all(|l| l.len() <= MAXLEN) {
        return (if body.is_ascii() { "7bit" } else { "8bit" }, body);
    }
    // Python picks the shorter encoding of the first ten lines.
    let sniff = join_lines(&lines[..lines.len().min(10)]);
    let sniff_qp = quoted_printable(&sniff);
    if sniff_qp.len() > sniff.len().div_ceil(3) * 4 + 1 {
        ("base64", base64_lines(&body))
    } else {
        (
            "quoted-printable",
            if lines.len() <= 10 {
                sniff_qp
            } else {
                quoted_printable(&body)
            },
        )
    }
}

/// `bytes.splitlines()`: breaks at LF, CR and CRLF; no trailing empty line.
fn byte_lines(text: &[u8]) -> Vec<&[u8]> {
    let (mut lines, mut start, mut i) = (Vec::new(), 0, 0);
    while i < text.len() {
        if matches!(text[i], b'\r' | b'\n') {
            lines.push(&text[start..i]);
            i += if text[i..].starts_with(b"\r\n") { 2 } else { 1 };
            start = i;
        } else {
            i += 1;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

fn join_lines(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = lines.join(&b'\n');
    out.push(b'\n');
    out
}

fn push_hex_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.extend([b'=', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
}

/// `quoprimime.body_encode(body, 78)` for a body of LF-terminated lines.
fn quoted_printable(body: &[u8]) -> Vec<u8> {
    let mut escaped = Vec::with_capacity(body.len() * 3);
    for &b in body {
        match b {
            b'=' => push_hex_escape(&mut escaped, b),
            // No CR is left: the body was split into lines.
            b' '..=b'~' | b'\t' | b'\n' => escaped.push(b),
            _ => push_hex_escape(&mut escaped, b),
        }
    }
    let mut out = Vec::with_capacity(escaped.len() + escaped.len() / 38);
    for line in escaped
        .strip_suffix(b"\n")
        .unwrap_or(&escaped)
        .split(|&b| b == b'\n')
    {
        qp_line(line, &mut out);
        out.push(b'\n');
    }
    out
}

/// One escaped line, cut by soft breaks ("=" + LF) into pieces of at most 78 characters.
fn qp_line(line: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    // Python loops while start <= len - 1 - 78, i.e. while over 78 characters are left.
    while start + MAXLEN < line.len() {
        let stop = start + MAXLEN - 1;
        // Never split an "=XX" escape: its "=" then doubles as the soft break.
        let (end, next) = match [line[stop - 2], line[stop - 1]] {
            [b'=', _] => (stop - 1, stop - 2),
            [_, b'='] => (stop, stop - 1),
            _ => (stop, stop),
        };
        out.extend_from_slice(&line[start..end]);
        if next == stop {
            out.push(b'=');
        }
        out.push(b'\n');
        start = next;
    }
    match line.last() {
        // A trailing blank must be escaped or followed by a soft break.
        Some(&ws @ (b' ' | b'\t')) => {
            out.extend_from_slice(&line[start..line.len() - 1]);
            match start + MAXLEN + 1 - line.len() {
                room if room >= 3 => push_hex_escape(out, ws),
                2 => out.extend([ws, b'=', b'\n']),
                _ => {
                    out.extend(b"=\n");
                    push_hex_escape(out, ws);
                }
            }
        }
        _ => out.extend_from_slice(&line[start..]),
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                char::from(B64[(n >> (18 - 6 * i) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
}

/// Base64 in 76-character lines (57 input bytes each), each ending in LF.
fn base64_lines(data: &[u8]) -> Vec<u8> {
    data.chunks(MAXLEN / 4 * 3)
        .flat_map(|chunk| base64(chunk).into_bytes().into_iter().chain([b'\n']))
        .collect()
}

// ---------------------------------------------------------------- header tokens

/// A parse error: `Parse` is Python's `HeaderParseError`, which the parser catches to
/// backtrack; `Raise` names an exception Python lets escape to the caller.
#[derive(Clone, Copy)]
enum PErr {
    Parse,
    Raise(&'static str),
    /// A domain literal cut off by the end of the value. Python carries on with a defect
    /// object in the tree, which ends in `AttributeError` unless an obs-route backtracks.
    CutDomainLiteral,
}
use PErr::Parse;

const INDEX_ERROR: PErr = PErr::Raise("IndexError");

fn raised(header: &str, e: PErr) -> String {
    let exception = match e {
        Parse => "HeaderParseError",
        PErr::Raise(name) => name,
        PErr::CutDomainLiteral => "AttributeError",
    };
    format!("the {header} header cannot be parsed (Python raises {exception})")
}

/// Terminal kinds, as far as folding tells them apart.
#[derive(Clone, Copy, PartialEq)]
enum Tk {
    Value,
    /// Unquoted quoted-string or domain-literal text (token type `ptext`).
    Ptext,
    Space,
    /// Comment text: a whitespace terminal of token type `ptext` in Python.
    SpacePtext,
    /// Whitespace between two encoded words: it prints as nothing.
    HiddenSpace,
}

/// Token-list kinds, again only those that behave differently.
#[derive(Clone, Copy, PartialEq)]
enum Lk {
    Plain,
    /// Lists with `as_ew_allowed = False`: addr-spec, local-part, domain and the like.
    NoEw,
    Cfws,
    Comment,
    BareQuoted,
    EncodedWord,
    DotAtom,
    /// Mailbox or invalid-mailbox: what `all_mailboxes` counts.
    Mailbox,
}

enum Node {
    T(Tk, String),
    L(Lk, Vec<Node>),
}
use Node::{L, T};

fn lit(s: &str) -> Node {
    T(Tk::Value, s.to_owned())
}

/// `token[:0] = [leader]`, which Python supports only on token lists.
fn prepend(tok: &mut Node, leader: Option<Node>) -> Result<(), PErr> {
    match (tok, leader) {
        (_, None) => {}
        (L(_, kids), Some(leader)) => kids.insert(0, leader),
        (T(..), Some(_)) => return Err(PErr::Raise("TypeError")),
    }
    Ok(())
}

/// The unparsed rest of a header value. Python re-parses rewritten text in one spot
/// (obs-local-part) and parses on in it, so rests share one of possibly several buffers.
#[derive(Clone)]
struct Val {
    buf: Rc<[char]>,
    at: usize,
}

impl Deref for Val {
    type Target = [char];
    fn deref(&self) -> &[char] {
        &self.buf[self.at..]
    }
}

impl Val {
    fn new(s: &str) -> Self {
        Self {
            buf: s.chars().collect(),
            at: 0,
        }
    }
    /// The value without its first `n` characters (Python's `value[n:]`).
    fn skip(&self, n: usize) -> Self {
        Self {
            buf: Rc::clone(&self.buf),
            at: (self.at + n).min(self.buf.len()),
        }
    }
    fn starts(&self, f: impl Fn(char) -> bool) -> bool {
        self.first().is_some_and(|&c| f(c))
    }
    fn is(&self, c: char) -> bool {
        self.first() == Some(&c)
    }
    /// `value[0]` where Python does not guard it, so an empty value raises `IndexError`.
    fn head(&self) -> Result<char, PErr> {
        self.first().copied().ok_or(INDEX_ERROR)
    }
    fn take(&self, n: usize, kind: Tk) -> (Node, Self) {
        let n = n.min(self.len());
        (T(kind, self[..n].iter().collect()), self.skip(n))
    }
    fn find(&self, pat: [char; 2]) -> Option<usize> {
        self.windows(2).position(|w| w == pat)
    }
}

/// Appends a parsed token and returns the rest of the value.
fn eat(kids: &mut Vec<Node>, (tok, rest): (Node, Val)) -> Val {
    kids.push(tok);
    rest
}

fn wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}
fn cfws_leader(c: char) -> bool {
    wsp(c) || c == '('
}
fn special(c: char) -> bool {
    SPECIALS.contains(c)
}
fn atom_end(c: char) -> bool {
    special(c) || wsp(c)
}
fn phrase_end(c: char) -> bool {
    special(c) && !".\"(".contains(c)
}
/// Python's `str.isspace`, which decides what `str.lstrip()` removes.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

// ---------------------------------------------------------------- unstructured text

fn get_fws(v: &Val) -> (Node, Val) {
    v.take(v.iter().take_while(|&&c| py_space(c)).count(), Tk::Space)
}

/// Splits text into whitespace and word terminals.
fn split_words(mut v: Val, kids: &mut Vec<Node>) {
    while let Some(&c) = v.first() {
        let word_len = v.iter().position(|&c| wsp(c)).unwrap_or(v.len());
        v = eat(
            kids,
            if wsp(c) {
                get_fws(&v)
            } else {
                v.take(word_len, Tk::Value)
            },
        );
    }
}

/// Whitespace between two encoded words is not part of the text; Python hides it.
fn hide_space_between_ews(kids: &mut [Node]) {
    if let [
        ..,
        L(Lk::EncodedWord, _),
        T(kind @ (Tk::Space | Tk::HiddenSpace), _),
    ] = kids
    {
        *kind = Tk::HiddenSpace;
    }
}

/// `Err(true)` is Python's `_InvalidEwError`, `Err(false)` a plain `HeaderParseError`.
fn get_encoded_word(v: &Val) -> Result<(Node, Val), bool> {
    if !v.starts_with(&['=', '?']) {
        return Err(false);
    }
    let end = 2 + v.skip(2).find(['?', '=']).ok_or(false)?;
    let mut tok: String = v[2..end].iter().collect();
    let mut rest = v.skip(end + 2);
    // "?=" followed by two hex digits was a q escape ("=XX"), not the end.
    if rest.len() > 1
        && rest[..2].iter().all(char::is_ascii_hexdigit)
        && tok.matches('?').count() < 2
    {
        let more = rest.find(['?', '=']);
        tok.push_str("?=");
        tok.extend(&rest[..more.unwrap_or(rest.len())]);
        rest = rest.skip(more.map_or(rest.len(), |j| j + 2));
    }
    let mut kids = Vec::new();
    split_words(Val::new(&decode_ew(&tok).ok_or(true)?), &mut kids);
    Ok((L(Lk::EncodedWord, kids), rest))
}

/// Decodes `charset?cte?text`; `None` where Python fails or where we do not follow it.
fn decode_ew(tok: &str) -> Option<String> {
    let mut parts = tok.split('?');
    let (charset, cte, data) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !data.is_ascii() {
        return None;
    }
    let bytes = match cte {
        "q" | "Q" => decode_q(data.as_bytes()),
        "b" | "B" => decode_b(data.as_bytes())?,
        _ => return None,
    };
    let latin1 = || bytes.iter().map(|&b| char::from(b)).collect::<String>();
    match charset
        .split('*')
        .next()?
        .to_ascii_lowercase()
        .replace(['-', ' '], "_")
        .as_str()
    {
        "utf_8" | "utf8" | "u8" | "utf" => String::from_utf8(bytes).ok(),
        "latin_1" | "latin1" | "iso_8859_1" | "iso8859_1" | "l1" | "8859" | "cp819" | "latin" => {
            Some(latin1())
        }
        // Python decodes unknown charsets as ASCII; ASCII itself fails on high bytes.
        _ => bytes.is_ascii().then(latin1),
    }
}

fn decode_q(data: &[u8]) -> Vec<u8> {
    let (mut out, mut i) = (Vec::with_capacity(data.len()), 0);
    while let Some(&b) = data.get(i) {
        let hex = data
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        match (
            b,
            hex.and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()),
        ) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 2;
            }
            (b'_', _) => out.push(b' '),
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

/// Strict base64 after adding missing padding; Python's lenient fallbacks are not followed.
fn decode_b(data: &[u8]) -> Option<Vec<u8>> {
    let stripped = data.iter().rposition(|&b| b != b'=').map_or(0, |i| i + 1);
    if data.len() - stripped + (4 - data.len() % 4) % 4 > 2 {
        return None;
    }
    let sextet = |b: u8| {
        B64.iter()
            .position(|&c| c == b)
            .and_then(|p| u32::try_from(p).ok())
    };
    let sextets: Vec<u32> = data[..stripped]
        .iter()
        .map(|&b| sextet(b))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for group in sextets.chunks(4) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &s)| acc | s << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..group.len()]);
    }
    Some(out)
}

/// Whether `=\?[^?]*\?[qQbB]\?.*?\?=` matches anywhere in `t`, in linear time.
fn has_rfc2047(t: &[char]) -> bool {
    let n = t.len();
    // First '?', first "?=" and first LF (which `.*?` cannot cross) at or after each index.
    let (mut next_q, mut next_end, mut next_lf) = (vec![n; n + 1], vec![n; n + 1], vec![n; n + 1]);
    for i in (0..n).rev() {
        next_q[i] = if t[i] == '?' { i } else { next_q[i + 1] };
        next_end[i] = if t[i] == '?' && t.get(i + 1) == Some(&'=') {
            i
        } else {
            next_end[i + 1]
        };
        next_lf[i] = if t[i] == '\n' { i } else { next_lf[i + 1] };
    }
    (0..n.saturating_sub(1))
        .filter(|&i| t[i] == '=' && t[i + 1] == '?')
        .any(|i| {
            let q = next_q[i + 2];
            q + 3 <= n
                && "qQbB".contains(t[q + 1])
                && t[q + 2] == '?'
                && next_end[q + 3] < next_lf[q + 3]
        })
}

/// Python's `get_unstructured`, the Subject parser.
fn get_unstructured(mut v: Val) -> Node {
    let mut kids: Vec<Node> = Vec::new();
    while let Some(&c) = v.first() {
        if wsp(c) {
            v = eat(&mut kids, get_fws(&v));
            continue;
        }
        let mut valid_ew = true;
        if v.starts_with(&['=', '?']) {
            match get_encoded_word(&v) {
                Ok(ew) => {
                    hide_space_between_ews(&mut kids);
                    v = eat(&mut kids, ew);
                    continue;
                }
                Err(invalid) => valid_ew = !invalid,
            }
        }
        let mut end = v.iter().position(|&c| wsp(c)).unwrap_or(v.len());
        if valid_ew && has_rfc2047(&v[..end]) {
            // Cut before an encoded word glued to preceding text (always making progress).
            end = v.find(['=', '?']).filter(|&p| p > 0).unwrap_or(end);
        }
        v = eat(&mut kids, v.take(end, Tk::Value));
    }
    L(Lk::Plain, kids)
}

// ---------------------------------------------------------------- address lists

type PResult = Result<(Node, Val), PErr>;

/// Python's `if not ok: raise HeaderParseError`.
fn need(ok: bool) -> Result<(), PErr> {
    if ok { Ok(()) } else { Err(Parse) }
}

fn get_ptext(v: &Val, ends: &str, kind: Tk) -> (Node, Val) {
    let frag = v.iter().position(|&c| wsp(c)).unwrap_or(v.len());
    let (mut out, mut escape, mut end) = (String::new(), false, frag);
    for (i, &c) in v[..frag].iter().enumerate() {
        if c == '\\' && !escape {
            escape = true;
            continue;
        }
        if escape {
            escape = false;
        } else if ends.contains(c) {
            end = i;
            break;
        }
        out.push(c);
    }
    (T(kind, out), v.skip(end))
}

fn opt_cfws(v: &Val) -> Result<(Option<Node>, Val), PErr> {
    if !v.starts(cfws_leader) {
        return Ok((None, v.clone()));
    }
    let (cfws, rest) = get_cfws(v)?;
    Ok((Some(cfws), rest))
}

fn push_cfws(kids: &mut Vec<Node>, v: &Val) -> Result<Val, PErr> {
    let (cfws, rest) = opt_cfws(v)?;
    kids.extend(cfws);
    Ok(rest)
}

fn get_cfws(v: &Val) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    while let Some(&c) = v.first().filter(|&&c| cfws_leader(c)) {
        v = eat(
            &mut kids,
            if wsp(c) {
                get_fws(&v)
            } else {
                get_comment(&v, 0)?
            },
        );
    }
    Ok((L(Lk::Cfws, kids), v))
}

fn get_comment(v: &Val, depth: usize) -> PResult {
    if depth > MAX_COMMENT_DEPTH {
        return Err(PErr::Raise("RecursionError"));
    }
    let (mut v, mut kids) = (v.skip(1), Vec::new());
    while let Some(&c) = v.first().filter(|&&c| c != ')') {
        let tok = match c {
            ' ' | '\t' => get_fws(&v),
            '(' => get_comment(&v, depth + 1)?,
            _ => get_ptext(&v, "()", Tk::SpacePtext),
        };
        v = eat(&mut kids, tok);
    }
    Ok((L(Lk::Comment, kids), v.skip(1)))
}

fn get_quoted_string(v: &Val) -> PResult {
    let mut kids = Vec::new();
    let v = push_cfws(&mut kids, v)?;
    need(v.head()? == '"')?;
    let (mut v, mut inner) = (v.skip(1), Vec::new());
    if v.is('"') {
        v = eat(&mut inner, get_ptext(&v, "\"", Tk::Ptext));
    }
    while v.starts(|c| c != '"') {
        let tok = if v.starts(wsp) {
            get_fws(&v)
        } else if let Ok(found) = get_encoded_word(&v) {
            hide_space_between_ews(&mut inner);
            found
        } else {
            get_ptext(&v, "\"", Tk::Ptext)
        };
        v = eat(&mut inner, tok);
    }
    kids.push(L(Lk::BareQuoted, inner));
    let v = push_cfws(&mut kids, &v.skip(1))?;
    Ok((L(Lk::Plain, kids), v))
}

fn get_atext(v: &Val) -> PResult {
    match v.iter().take_while(|&&c| !atom_end(c)).count() {
        0 => Err(Parse),
        n => Ok(v.take(n, Tk::Value)),
    }
}

fn get_dot_atom_text(v: &Val) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    need(v.starts(|c| !atom_end(c)))?;
    while v.starts(|c| !atom_end(c)) {
        v = eat(&mut kids, get_atext(&v)?);
        if v.is('.') {
            v = eat(&mut kids, v.take(1, Tk::Value));
        }
    }
    need(!matches!(kids.last(), Some(T(_, s)) if s == "."))?;
    Ok((L(Lk::Plain, kids), v))
}

/// Atom (`text` = `get_atext`) or dot-atom: an encoded word or `text`, in optional CFWS.
fn get_atom_like(v: &Val, text: fn(&Val) -> PResult, kind: Lk) -> PResult {
    let mut kids = Vec::new();
    let v = push_cfws(&mut kids, v)?;
    need(!v.starts(atom_end))?;
    let v = eat(&mut kids, get_encoded_word(&v).or_else(|_| text(&v))?);
    let v = push_cfws(&mut kids, &v)?;
    Ok((L(kind, kids), v))
}

fn get_atom(v: &Val) -> PResult {
    get_atom_like(v, get_atext, Lk::Plain)
}

fn get_dot_atom(v: &Val) -> PResult {
    v.head()?;
    get_atom_like(v, get_dot_atom_text, Lk::DotAtom)
}

fn get_word(v: &Val) -> PResult {
    v.head()?;
    let (leader, v) = opt_cfws(v)?;
    let (mut tok, rest) = match v.first() {
        Some('"') => get_quoted_string(&v)?,
        Some(&c) if !special(c) => get_atom(&v)?,
        _ => return Err(Parse),
    };
    prepend(&mut tok, leader)?;
    Ok((tok, rest))
}

/// A word, else (where one starts) comments and whitespace: Python's recovery in phrases.
fn word_or_cfws(v: &Val) -> PResult {
    match get_word(v) {
        Err(Parse) if v.starts(cfws_leader) => get_cfws(v),
        other => other,
    }
}

fn get_phrase(v: &Val) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    match get_word(&v) {
        Ok(word) => v = eat(&mut kids, word),
        Err(Parse) => {}
        Err(e) => return Err(e),
    }
    while let Some(&c) = v.first().filter(|&&c| !phrase_end(c)) {
        v = eat(
            &mut kids,
            if c == '.' {
                v.take(1, Tk::Value)
            } else {
                word_or_cfws(&v)?
            },
        );
    }
    Ok((L(Lk::Plain, kids), v))
}

fn get_local_part(v: &Val) -> PResult {
    v.head()?;
    let (leader, v) = opt_cfws(v)?;
    let c = *v.first().ok_or(Parse)?;
    let (mut tok, mut v) = match get_dot_atom(&v) {
        Err(Parse) => match get_word(&v) {
            Err(Parse) if c == '\\' || !phrase_end(c) => (L(Lk::Plain, Vec::new()), v),
            other => other?,
        },
        other => other?,
    };
    prepend(&mut tok, leader)?;
    if v.starts(|c| c == '\\' || !phrase_end(c)) {
        // Python re-parses its rendering of the part so far, plus the rest, and goes on.
        (tok, v) = get_obs_local_part(&Val::new(&(text(&tok) + &v.iter().collect::<String>())))?;
    }
    Ok((L(Lk::NoEw, vec![tok]), v))
}

fn get_obs_local_part(v: &Val) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    while let Some(&c) = v.first().filter(|&&c| c == '\\' || !phrase_end(c)) {
        v = eat(
            &mut kids,
            if c == '.' || c == '\\' {
                v.take(1, Tk::Value)
            } else {
                word_or_cfws(&v)?
            },
        );
    }
    // Python's defect checks index kids[0], and kids[1] after a leading comment.
    if matches!(kids.as_slice(), [] | [L(Lk::Cfws, _)]) {
        return Err(INDEX_ERROR);
    }
    Ok((L(Lk::NoEw, kids), v))
}

fn get_domain_literal(v: &Val) -> PResult {
    v.head()?;
    let mut kids = Vec::new();
    let v = push_cfws(&mut kids, v)?;
    need(v.is('['))?;
    let cut = |v: &Val| {
        if v.is_empty() {
            Err(PErr::CutDomainLiteral)
        } else {
            Ok(())
        }
    };
    let v = v.skip(1);
    cut(&v)?;
    kids.push(lit("["));
    let v = if v.starts(wsp) {
        eat(&mut kids, get_fws(&v))
    } else {
        v
    };
    let v = eat(&mut kids, get_ptext(&v, "[]", Tk::Ptext));
    cut(&v)?;
    let v = if v.starts(wsp) {
        eat(&mut kids, get_fws(&v))
    } else {
        v
    };
    cut(&v)?;
    need(v.is(']'))?;
    kids.push(lit("]"));
    let v = push_cfws(&mut kids, &v.skip(1))?;
    Ok((L(Lk::NoEw, kids), v))
}

fn get_domain(v: &Val) -> PResult {
    v.head()?;
    let (leader, v) = opt_cfws(v)?;
    need(!v.is_empty())?;
    if v.is('[') {
        let (mut tok, v) = get_domain_literal(&v)?;
        prepend(&mut tok, leader)?;
        return Ok((L(Lk::NoEw, vec![tok]), v));
    }
    let (mut tok, mut v) = match get_dot_atom(&v) {
        Err(Parse) => get_atom(&v)?,
        other => other?,
    };
    need(!v.is('@'))?;
    prepend(&mut tok, leader)?;
    let mut kids = vec![tok];
    if v.is('.') {
        // An obsolete domain, with comments between its atoms: flatten the dot-atom.
        if let [L(Lk::DotAtom, inner)] = kids.as_mut_slice() {
            kids = std::mem::take(inner);
        }
        while v.is('.') {
            v = eat(&mut kids, v.take(1, Tk::Value));
            v = eat(&mut kids, get_atom(&v)?);
        }
    }
    Ok((L(Lk::NoEw, kids), v))
}

fn get_addr_spec(v: &Val) -> PResult {
    let (local, v) = get_local_part(v)?;
    if !v.is('@') {
        return Ok((L(Lk::NoEw, vec![local]), v));
    }
    let (domain, v) = get_domain(&v.skip(1))?;
    Ok((L(Lk::NoEw, vec![local, lit("@"), domain]), v))
}

/// Python's obs-route (`@a,@b:` before an addr-spec), in a word of its own.
fn get_obs_route(v: &Val) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    // A domain literal cut off here makes Python fail at the missing ':' instead.
    let domain = |v: &Val| {
        get_domain(v).map_err(|e| {
            if let PErr::CutDomainLiteral = e {
                Parse
            } else {
                e
            }
        })
    };
    while let Some(&c) = v.first().filter(|&&c| c == ',' || cfws_leader(c)) {
        v = if c == ',' {
            eat(&mut kids, v.take(1, Tk::Value))
        } else {
            push_cfws(&mut kids, &v)?
        };
    }
    need(v.is('@'))?;
    v = eat(&mut kids, v.take(1, Tk::Value));
    v = eat(&mut kids, domain(&v)?);
    while v.is(',') {
        v = eat(&mut kids, v.take(1, Tk::Value));
        if v.is_empty() {
            break;
        }
        v = push_cfws(&mut kids, &v)?;
        if v.head()? == '@' {
            v = eat(&mut kids, v.take(1, Tk::Value));
            v = eat(&mut kids, domain(&v)?);
        }
    }
    need(v.is(':'))?;
    v = eat(&mut kids, v.take(1, Tk::Value));
    Ok((L(Lk::Plain, kids), v))
}

fn get_angle_addr(v: &Val) -> PResult {
    v.head()?;
    let mut kids = Vec::new();
    let v = push_cfws(&mut kids, v)?;
    need(v.is('<'))?;
    let v = eat(&mut kids, v.take(1, Tk::Value));
    if v.head()? == '>' {
        return Ok((
            L(Lk::Plain, kids.into_iter().chain([lit(">")]).collect()),
            v.skip(1),
        ));
    }
    let v = match get_addr_spec(&v) {
        Err(Parse) => {
            let rest = eat(&mut kids, get_obs_route(&v)?);
            eat(&mut kids, get_addr_spec(&rest)?)
        }
        other => eat(&mut kids, other?),
    };
    kids.push(lit(">"));
    let v = push_cfws(&mut kids, &if v.is('>') { v.skip(1) } else { v })?;
    Ok((L(Lk::Plain, kids), v))
}

fn get_name_addr(v: &Val) -> PResult {
    v.head()?;
    let (mut leader, mut v) = opt_cfws(v)?;
    let mut kids = Vec::new();
    let c = *v.first().ok_or(Parse)?;
    if c != '<' {
        need(!phrase_end(c))?;
        let (mut name, rest) = get_phrase(&v)?;
        need(!rest.is_empty())?;
        // Python puts the leading comment into the first word (failing as it does).
        if let (Some(_), L(_, words)) = (&leader, &mut name) {
            prepend(words.first_mut().ok_or(INDEX_ERROR)?, leader.take())?;
        }
        kids.push(name);
        v = rest;
    }
    let (mut angle, v) = get_angle_addr(&v)?;
    prepend(&mut angle, leader)?;
    kids.push(angle);
    Ok((L(Lk::Plain, kids), v))
}

fn get_mailbox(v: &Val) -> PResult {
    let (tok, v) = match get_name_addr(v) {
        Err(Parse) => get_addr_spec(v)?,
        other => other?,
    };
    Ok((L(Lk::Mailbox, vec![tok]), v))
}

fn get_invalid_mailbox(v: &Val, ends: &str) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    while let Some(&c) = v.first().filter(|&&c| !ends.contains(c)) {
        v = eat(
            &mut kids,
            if phrase_end(c) {
                v.take(1, Tk::Value)
            } else {
                get_phrase(&v)?
            },
        );
    }
    Ok((L(Lk::Mailbox, kids), v))
}

/// Python's mailbox-list (`ends` ",;") and address-list (`ends` ",") loops: an entry, or
/// else an empty element or an invalid mailbox; trailing junk joins the entry before it.
fn get_list(v: &Val, ends: &str, entry: fn(&Val) -> PResult, wrap: fn(Node) -> Node) -> PResult {
    let (mut v, mut kids) = (v.clone(), Vec::new());
    let in_group = ends.contains(';');
    while v.starts(|c| !in_group || c != ';') {
        match entry(&v) {
            Ok(tok) => v = eat(&mut kids, tok),
            Err(Parse) => {
                let (leader, rest) = opt_cfws(&v)?;
                v = rest;
                if leader.is_some() && !v.starts(|c| !ends.contains(c))
                    || leader.is_none() && v.is(',')
                {
                    kids.extend(leader);
                } else {
                    let (mut tok, rest) = get_invalid_mailbox(&v, ends)?;
                    prepend(&mut tok, leader)?;
                    kids.push(wrap(tok));
                    v = rest;
                }
            }
            Err(e) => return Err(e),
        }
        if v.starts(|c| !ends.contains(c)) {
            let (L(_, junk), rest) = get_invalid_mailbox(&v, ends)? else {
                return Err(INDEX_ERROR);
            };
            let target = match (in_group, kids.last_mut().ok_or(INDEX_ERROR)?) {
                (false, L(_, address)) => address.first_mut().ok_or(INDEX_ERROR)?,
                (_, last) => last,
            };
            let L(_, mailbox) = target else {
                return Err(PErr::Raise("AttributeError"));
            };
            mailbox.extend(junk);
            v = rest;
        }
        if v.is(',') {
            v = eat(&mut kids, v.take(1, Tk::Value));
        }
    }
    Ok((L(Lk::Plain, kids), v))
}

fn get_group_list(v: &Val) -> PResult {
    let (leader, v) = opt_cfws(v)?;
    if v.is_empty() || v.is(';') && leader.is_some() {
        return Ok((L(Lk::Plain, leader.into_iter().collect()), v));
    }
    let (L(_, mut mailboxes), v) = get_list(&v, ",;", get_mailbox, |n| n)? else {
        return Err(INDEX_ERROR);
    };
    mailboxes.splice(0..0, leader);
    if mailboxes.iter().any(|n| matches!(n, L(Lk::Mailbox, _))) {
        mailboxes = vec![L(Lk::Plain, mailboxes)];
    }
    Ok((L(Lk::Plain, mailboxes), v))
}

fn get_group(v: &Val) -> PResult {
    let (name, v) = get_phrase(v)?;
    need(v.is(':'))?;
    let mut kids = vec![name, lit(":")];
    let v = v.skip(1);
    if v.is(';') {
        kids.push(lit(";"));
        return Ok((L(Lk::Plain, kids), v.skip(1)));
    }
    let v = eat(&mut kids, get_group_list(&v)?);
    need(!v.starts(|c| c != ';'))?;
    kids.push(lit(";"));
    let v = push_cfws(&mut kids, &v.skip(1))?;
    Ok((L(Lk::Plain, kids), v))
}

fn get_address(v: &Val) -> PResult {
    let (tok, v) = match get_group(v) {
        Err(Parse) => get_mailbox(v)?,
        other => other?,
    };
    Ok((L(Lk::Plain, vec![tok]), v))
}

fn get_address_list(v: &Val) -> Result<Node, PErr> {
    Ok(get_list(v, ",", get_address, |n| L(Lk::Plain, vec![n]))?.0)
}

// ---------------------------------------------------------------- folding

/// `str(token)`: the canonical text of a token, with quoting re-applied.
fn text(n: &Node) -> String {
    let mut out = String::new();
    write_text(n, &mut out);
    out
}

fn write_text(n: &Node, out: &mut String) {
    match n {
        T(Tk::HiddenSpace, _) => {}
        T(_, s) => out.push_str(s),
        L(Lk::BareQuoted, kids) => {
            let inner: String = kids.iter().map(text).collect();
            out.push('"');
            out.push_str(&inner.replace('\\', "\\\\").replace('"', "\\\""));
            out.push('"');
        }
        L(Lk::Comment, kids) => {
            out.push('(');
            for k in kids {
                match k {
                    L(Lk::Comment, _) => write_text(k, out),
                    _ => out.push_str(
                        &text(k)
                            .replace('\\', "\\\\")
                            .replace('(', "\\(")
                            .replace(')', "\\)"),
                    ),
                }
            }
            out.push(')');
        }
        L(_, kids) => kids.iter().for_each(|k| write_text(k, out)),
    }
}

fn ew_allowed(n: &Node) -> bool {
    match n {
        T(..) => true,
        L(Lk::NoEw, _) => false,
        L(_, kids) => kids.iter().all(ew_allowed),
    }
}

fn starts_with_fws(n: &Node) -> Result<bool, PErr> {
    match n {
        T(kind, _) => Ok(matches!(kind, Tk::Space | Tk::SpacePtext | Tk::HiddenSpace)),
        L(_, kids) => starts_with_fws(kids.first().ok_or(INDEX_ERROR)?),
    }
}

fn fold_header(name: &str, tree: Node) -> Result<String, String> {
    let mut kids = vec![L(Lk::NoEw, vec![lit(name), lit(":")])];
    if matches!(&tree, L(_, k) if !k.is_empty()) {
        kids.push(L(Lk::Cfws, vec![T(Tk::Space, " ".to_owned())]));
    }
    kids.push(tree);
    let lines = refold(&L(Lk::Plain, kids), &mut HashMap::new()).map_err(|e| raised(name, e))?;
    // Here a CR or LF can only come from a decoded encoded word; Python writes it out.
    if lines.iter().flatten().any(|&c| c == '\r' || c == '\n') {
        return Err(format!("the {name} header would contain a line break"));
    }
    let out: String = lines
        .iter()
        .flat_map(|line| line.iter().copied().chain(['\n']))
        .collect();
    if !out.is_ascii() {
        return Err(format!(
            "the {name} header cannot be written as ASCII (Python raises UnicodeEncodeError)"
        ));
    }
    Ok(out)
}

enum Item<'a> {
    Part(&'a Node),
    /// Marks where a part that must not become an encoded word ends.
    Unblock,
}

fn push_front_all<'a>(parts: &mut VecDeque<Item<'a>>, kids: &'a [Node]) {
    kids.iter()
        .rev()
        .for_each(|k| parts.push_front(Item::Part(k)));
}

fn last_len(lines: &[Vec<char>]) -> usize {
    lines.last().map_or(0, Vec::len)
}

/// Whether `n` more characters fit on the last line.
fn fits(lines: &[Vec<char>], n: usize) -> bool {
    last_len(lines) + n <= MAXLEN
}

fn last_line(lines: &mut Vec<Vec<char>>) -> &mut Vec<char> {
    if lines.is_empty() {
        lines.push(Vec::new());
    }
    let last = lines.len() - 1;
    &mut lines[last]
}

/// Takes a trailing blank off the last line, to start the next line with it.
fn steal_trailing_wsp(lines: &mut [Vec<char>]) -> Vec<char> {
    match lines.last_mut() {
        Some(line) if line.last().is_some_and(|&c| wsp(c)) => line.pop().into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Python's `_refold_parse_tree`: lays the children of `root` out in lines of at most 78
/// characters where it can, RFC 2047-encoding what is not ASCII.
///
/// `alone` caches, by node address, what a part folds to on its own (`None`: several lines).
/// Python refolds the same subtrees at every nesting level, which is exponential in depth.
fn refold(
    root: &Node,
    alone: &mut HashMap<usize, Option<Vec<char>>>,
) -> Result<Vec<Vec<char>>, PErr> {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut last_ew, mut blocked, mut want_encoding) = (None, 0usize, false);
    let mut parts: VecDeque<Item> = match root {
        L(_, kids) => kids.iter().map(Item::Part).collect(),
        T(..) => VecDeque::new(),
    };
    while let Some(item) = parts.pop_front() {
        let Item::Part(part) = item else {
            blocked -= 1;
            continue;
        };
        let tstr: Vec<char> = text(part).chars().collect();
        let is_ptext = matches!(part, T(Tk::Ptext | Tk::SpacePtext, _));
        want_encoding |=
            is_ptext && tstr.iter().any(|&c| special(c)) || !tstr.iter().all(char::is_ascii);
        if want_encoding && blocked == 0 {
            if !ew_allowed(part) {
                (want_encoding, last_ew) = (false, None);
                let key = std::ptr::from_ref(part) as usize;
                if !alone.contains_key(&key) {
                    let single = match refold(part, alone)?.as_slice() {
                        [line] if !line.contains(&'\n') => Some(line.clone()),
                        _ => None,
                    };
                    alone.insert(key, single);
                }
                // If it fits on one line on its own, it goes whole onto this or the next line.
                if let Some(Some(single)) = alone.get(&key) {
                    if !fits(&lines, single.len()) {
                        let carried = steal_trailing_wsp(&mut lines);
                        lines.push(carried);
                    }
                    last_line(&mut lines).extend_from_slice(single);
                    continue;
                }
            }
            match part {
                L(_, kids) => push_front_all(&mut parts, kids),
                T(..) => last_ew = fold_as_ew(&tstr, &mut lines, last_ew)?,
            }
            want_encoding = false;
            continue;
        }
        if fits(&lines, tstr.len()) {
            last_line(&mut lines).extend(tstr);
            continue;
        }
        // Too long for this line: move it whole to the next line if it fits there.
        if tstr.len() < MAXLEN {
            let carried = steal_trailing_wsp(&mut lines);
            if !carried.is_empty() || starts_with_fws(part)? {
                lines.push([carried, tstr].concat());
                last_ew = None;
                continue;
            }
        }
        match part {
            L(_, kids) => {
                if !ew_allowed(part) {
                    blocked += 1;
                    parts.push_front(Item::Unblock);
                }
                push_front_all(&mut parts, kids);
            }
            // An encoded word can be split across lines, so encode it even if ASCII.
            T(..) if blocked == 0 => {
                parts.push_front(Item::Part(part));
                want_encoding = true;
            }
            T(..) => {
                let carried = steal_trailing_wsp(&mut lines);
                if !carried.is_empty() || starts_with_fws(part)? {
                    lines.push([carried, tstr].concat());
                } else {
                    last_line(&mut lines).extend(tstr);
                }
            }
        }
    }
    Ok(lines)
}

/// Python's `_fold_as_ew`: appends `tstr` as utf-8 encoded words, merged with the encoded
/// text already ending the line (from index `last_ew`). Returns where that text now starts.
fn fold_as_ew(
    tstr: &[char],
    lines: &mut Vec<Vec<char>>,
    last_ew: Option<usize>,
) -> Result<Option<usize>, PErr> {
    let mut to_encode = tstr.to_vec();
    if let Some(at) = last_ew {
        let line = last_line(lines);
        let joined: String = line
            .get(at..)
            .unwrap_or_default()
            .iter()
            .chain(tstr)
            .collect();
        to_encode = text(&get_unstructured(Val::new(&joined))).chars().collect();
        line.truncate(at);
    }
    let (lead, mut start, mut end) = (*to_encode.first().ok_or(INDEX_ERROR)?, 0, to_encode.len());
    if wsp(lead) {
        // Blanks at either end stay plain text, outside the encoded word.
        start = 1;
        if last_len(lines) == MAXLEN {
            let carried = steal_trailing_wsp(lines);
            lines.push(carried);
        }
        last_line(lines).push(lead);
    }
    let trail = *to_encode[start..].last().ok_or(INDEX_ERROR)?;
    if wsp(trail) {
        end -= 1;
    }
    let mut new_last_ew = last_ew.unwrap_or_else(|| last_line(lines).len());
    while start < end {
        if last_len(lines) + EW_CHROME >= MAXLEN {
            lines.push(vec![' ']);
            continue;
        }
        // Shrink the chunk until its encoding fits; an empty one always does.
        let mut take = (end - start).min(MAXLEN - EW_CHROME - last_len(lines));
        let mut word = encode_word(&to_encode[start..start + take]);
        while !fits(lines, word.len()) && take > 0 {
            take -= 1;
            word = encode_word(&to_encode[start..start + take]);
        }
        last_line(lines).extend(word.chars());
        start += take;
        if start < end {
            lines.push(vec![' ']);
            new_last_ew = 1;
        }
    }
    if wsp(trail) {
        last_line(lines).push(trail);
    }
    Ok(Some(new_last_ew))
}

/// One RFC 2047 word: q unless b is at least five characters shorter.
fn encode_word(chars: &[char]) -> String {
    let bytes = chars.iter().collect::<String>().into_bytes();
    let q_safe = |b: u8| b.is_ascii_alphanumeric() || b"-!*+/ ".contains(&b);
    let q_len: usize = bytes.iter().map(|&b| if q_safe(b) { 1 } else { 3 }).sum();
    if q_len >= bytes.len().div_ceil(3) * 4 + 5 {
        return format!("=?utf-8?b?{}?=", base64(&bytes));
    }
    let mut q = Vec::with_capacity(q_len);
    for &b in &bytes {
        match b {
            b' ' => q.push(b'_'),
            _ if q_safe(b) => q.push(b),
            _ => push_hex_escape(&mut q, b),
        }
    }
    format!("=?utf-8?q?{}?=", String::from_utf8_lossy(&q))
}

#[cfg(test)]
mod tests {
    use super::build_message;
    use std::fmt::Write;

    /// What a case expects: Python's bytes, a Python exception, a deliberate refusal where
    /// Python writes an injected line break, or a documented difference (any message).
    enum Expect {
        Bytes(&'static [u8]),
        PythonRaises(&'static str),
        Refused(&'static str),
        Differs(&'static str),
    }

    struct Case {
        name: &'static str,
        to: &'static [&'static str],
        subject: Option<&'static str>,
        message: &'static str,
        expect: Expect,
    }

    const CASES: &[Case] = &include!("../tests/data/mime_cases.rs");

    fn show(bytes: &[u8]) -> String {
        bytes.escape_ascii().to_string().replace("\\n", "\\n\n")
    }

    /// Line by line: "  " same, "- " Python's line, "+ " ours (escaped, so blanks show).
    fn line_diff(got: &[u8], want: &[u8]) -> String {
        let (got, want): (Vec<_>, Vec<_>) = (
            got.split(|&b| b == b'\n').collect(),
            want.split(|&b| b == b'\n').collect(),
        );
        let mut out = String::from("--- Python\n+++ Rust\n");
        for i in 0..got.len().max(want.len()) {
            let (w, g) = (want.get(i), got.get(i));
            let marked: &[(&str, Option<&&[u8]>)] = if w == g {
                &[("  ", w)]
            } else {
                &[("- ", w), ("+ ", g)]
            };
            for (mark, line) in marked {
                if let Some(line) = line {
                    writeln!(out, "{mark}{}", line.escape_ascii()).expect("writing to a String");
                }
            }
        }
        out
    }

    #[test]
    fn matches_python() {
        let mut failures = Vec::new();
        for case in CASES {
            let to: Vec<String> = case.to.iter().map(|s| (*s).to_owned()).collect();
            // The recorded cases wrote Python's `None` as an empty list.
            let to = (!to.is_empty()).then_some(to.as_slice());
            let got = build_message(to, case.subject, case.message);
            let problem = match (&case.expect, &got) {
                (Expect::Bytes(want), Ok(got)) if got == want => None,
                (Expect::Bytes(want), Ok(got)) => Some(line_diff(got, want)),
                (Expect::Bytes(_), Err(e)) => Some(format!("unexpected error: {e}")),
                (Expect::PythonRaises(_) | Expect::Refused(_), Err(_))
                | (Expect::Differs(_), Ok(_)) => None,
                (Expect::Differs(why), Err(e)) => {
                    Some(format!("known difference ({why}) but got error: {e}"))
                }
                (Expect::PythonRaises(exc), Ok(got)) => {
                    Some(format!("Python raises {exc}, got\n{}", show(got)))
                }
                (Expect::Refused(why), Ok(got)) => {
                    Some(format!("should refuse ({why}), got\n{}", show(got)))
                }
            };
            if let Some(p) = problem {
                failures.push(format!("case {}: {p}", case.name));
            }
        }
        println!(
            "{} of {} cases match",
            CASES.len() - failures.len(),
            CASES.len()
        );
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let odd = [
            "",
            "\r",
            "\0",
            "=?",
            "=?utf-8?q?",
            "\"",
            "(",
            "<",
            "@",
            "a@[",
            "\\",
            "é@é",
            "=?utf-8?b?====?=",
        ];
        for s in odd {
            let to = vec![s.to_owned(), format!("{s} <{s}>")];
            let _ = build_message(Some(&to), Some(s), s);
        }
        let huge = "é ".repeat(50_000) + &"x".repeat(100_000) + "\r\n\r";
        assert!(build_message(Some(&[]), Some(&huge[..huge.len() - 3]), &huge).is_ok());
        let long_to = [
            "José Pérez <jose@example.com>".repeat(300),
            "é ".repeat(5_000),
        ];
        assert!(build_message(Some(&long_to), None, "").is_ok());
    }
}

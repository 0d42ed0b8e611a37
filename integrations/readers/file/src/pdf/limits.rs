//! Refuses PDFs that would make lopdf or pdf-extract allocate without bound:
//! streams that inflate too far, content too dense to parse, XObject loops.

use super::estimate::ParseCost;
use super::inflate::inflated_len;
use crate::util::DEFAULT_MAX_UNZIPPED_BYTES;
use pdf_extract::xref::{Xref, XrefEntry, XrefType};
use pdf_extract::{Dictionary, Document, Object, ObjectId, Reader, Stream};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The most one stream may inflate to (every decoding stage counted): well
/// above real content streams, fonts and object streams (a whole CJK font is
/// about 20 MiB), low enough that lopdf's copies of it stay within 100 MB.
pub(crate) const MAX_STREAM_BYTES: u64 = 32 << 20;
/// The most lopdf may be expected to take parsing one page's content, with
/// the forms it paints nested inside it: a dense page of real text costs
/// about 40 bytes per byte of content, so this admits about a megabyte of it.
pub(crate) const MAX_PARSE_BYTES: u64 = 48 << 20;
/// The most content bytes one page may make pdf-extract interpret, forms
/// counted each time they are painted: a form painted 1,000 times by a form
/// painted 1,000 times would otherwise run for hours without output.
pub(crate) const MAX_PAGE_WORK: u64 = 256 << 20;
/// Pages nested deeper than this in the page tree are a loop.
const MAX_TREE_DEPTH: usize = 256;

type Refusal = String;

fn name_of(id: ObjectId) -> String {
    format!("{} {} R", id.0, id.1)
}

/// Measures every stream in the file's bytes before lopdf loads it: lopdf
/// inflates cross-reference and object streams while loading (no filter it
/// takes runs first), so each object found in the bytes is parsed alone and
/// its streams measured. Object streams' parse cost is estimated too.
pub(crate) fn survey(bytes: &[u8]) -> Result<(), Refusal> {
    let headers = object_headers(bytes);
    let mut reader = Reader {
        buffer: bytes,
        document: Document::new(),
        encryption_state: None,
        raw_objects: BTreeMap::new(),
        password: None,
        strict: false,
    };
    let mut table = Xref::new(0, XrefType::CrossReferenceTable);
    for &(id, offset) in &headers {
        table.insert(id.0, normal(id, offset));
    }
    reader.document.reference_table = table;
    let mut total = 0u64;
    for &(id, offset) in &headers {
        // Where a number is used twice, each copy is measured in turn.
        reader
            .document
            .reference_table
            .insert(id.0, normal(id, offset));
        if let Ok(Object::Stream(stream)) = reader.get_object(id, &mut HashSet::new()) {
            total = total.saturating_add(measure(id, &stream)?);
            check_total(total)?;
        }
    }
    Ok(())
}

fn normal(id: ObjectId, offset: u32) -> XrefEntry {
    XrefEntry::Normal {
        offset,
        generation: id.1,
    }
}

/// Every `N G obj` in the bytes, with the offset of `N`.
fn object_headers(bytes: &[u8]) -> Vec<(ObjectId, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = find(&bytes[at..], b"obj") {
        let pos = at + found;
        at = pos + 3;
        if bytes.get(pos + 3).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        if let Some(header) = header_before(bytes, pos) {
            out.push(header);
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `N G ` ending at `end`, read backwards.
fn header_before(bytes: &[u8], end: usize) -> Option<(ObjectId, u32)> {
    let spaces = |mut i: usize| {
        while i > 0 && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        i
    };
    let digits = |mut i: usize| {
        while i > 0 && bytes[i - 1].is_ascii_digit() {
            i -= 1;
        }
        i
    };
    let gen_end = spaces(end);
    let gen_start = digits(gen_end);
    let num_end = spaces(gen_start);
    let num_start = digits(num_end);
    if gen_end == end || gen_start == gen_end || num_end == gen_start || num_start == num_end {
        return None;
    }
    let number = std::str::from_utf8(&bytes[num_start..num_end]).ok()?;
    let generation = std::str::from_utf8(&bytes[gen_start..gen_end]).ok()?;
    let id = (number.parse().ok()?, generation.parse().ok()?);
    Some((id, u32::try_from(num_start).ok()?))
}

/// The stream's inflated size, refused past [`MAX_STREAM_BYTES`]; an object
/// stream's estimated parse cost is refused past [`MAX_PARSE_BYTES`].
fn measure(id: ObjectId, stream: &Stream) -> Result<u64, Refusal> {
    let object_stream = stream.dict.has_type(b"ObjStm");
    let mut cost = ParseCost::new();
    let len = if object_stream {
        inflated_len(stream, MAX_STREAM_BYTES, &mut cost)
    } else {
        inflated_len(stream, MAX_STREAM_BYTES, &mut std::io::sink())
    };
    if len > MAX_STREAM_BYTES {
        return Err(format!(
            "stream {} inflates past {} MiB (a decompression bomb?)",
            name_of(id),
            MAX_STREAM_BYTES >> 20
        ));
    }
    cost.finish();
    if cost.bytes > MAX_PARSE_BYTES {
        return Err(format!(
            "object stream {} holds too many objects to parse (about {} MiB)",
            name_of(id),
            cost.bytes >> 20
        ));
    }
    Ok(len)
}

fn check_total(total: u64) -> Result<(), Refusal> {
    if total > DEFAULT_MAX_UNZIPPED_BYTES {
        return Err(format!(
            "its streams inflate past {} MiB in all (a decompression bomb?)",
            DEFAULT_MAX_UNZIPPED_BYTES >> 20
        ));
    }
    Ok(())
}

/// Measures every stream of the loaded document: what decryption revealed,
/// and streams lopdf read again after the survey (an indirect `/Length`).
pub(crate) fn check_loaded(doc: &Document) -> Result<(), Refusal> {
    let mut total = 0u64;
    for (&id, object) in &doc.objects {
        if let Object::Stream(stream) = object {
            total = total.saturating_add(measure(id, stream)?);
            check_total(total)?;
        }
    }
    Ok(())
}

/// Refuses a page whose content, with the forms it paints, would take
/// lopdf more than [`MAX_PARSE_BYTES`] to parse or pdf-extract more than
/// [`MAX_PAGE_WORK`] bytes to interpret; a form that paints itself; a page
/// tree that loops (pdf-extract recurses up `/Parent` without end).
pub(crate) fn check_page(doc: &Document, page_id: ObjectId) -> Result<(), Refusal> {
    let page = doc.get_dictionary(page_id).map_err(|e| e.to_string())?;
    check_parents(doc, page)?;
    let resources = inherited_resources(doc, page);
    let mut cost = ParseCost::new();
    for id in doc.get_page_contents(page_id) {
        if let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) {
            inflated_len(stream, MAX_STREAM_BYTES, &mut cost);
            // lopdf joins a page's streams with a line break.
            let _ = std::io::Write::write_all(&mut cost, b"\n");
        }
    }
    cost.finish();
    let mut walk = Walk {
        doc,
        memo: HashMap::new(),
        path: Vec::new(),
    };
    let (parse, work) = walk.painted(&cost, resources)?;
    let parse = parse.saturating_add(cost.bytes).saturating_add(cost.len);
    let work = work.saturating_add(cost.len);
    if parse > MAX_PARSE_BYTES {
        return Err(format!(
            "its content is too dense: parsing it would take about {} MiB (limit {} MiB)",
            parse >> 20,
            MAX_PARSE_BYTES >> 20
        ));
    }
    if work > MAX_PAGE_WORK {
        return Err(format!(
            "it paints its forms over and over: {} MiB of content to run (limit {} MiB)",
            work >> 20,
            MAX_PAGE_WORK >> 20
        ));
    }
    Ok(())
}

fn check_parents(doc: &Document, page: &Dictionary) -> Result<(), Refusal> {
    let mut node = page;
    for _ in 0..MAX_TREE_DEPTH {
        let Ok(parent) = node.get(b"Parent").and_then(Object::as_reference) else {
            return Ok(());
        };
        let Ok(next) = doc.get_dictionary(parent) else {
            return Ok(());
        };
        node = next;
    }
    Err("its page tree loops (/Parent)".into())
}

/// The page's `/Resources`, looked up its ancestors as pdf-extract does.
fn inherited_resources<'a>(doc: &'a Document, page: &'a Dictionary) -> Option<&'a Dictionary> {
    let mut node = page;
    for _ in 0..MAX_TREE_DEPTH {
        if let Some(found) = node
            .get(b"Resources")
            .ok()
            .and_then(|r| deref(doc, r).as_dict().ok())
        {
            return Some(found);
        }
        node = node
            .get(b"Parent")
            .and_then(Object::as_reference)
            .and_then(|id| doc.get_dictionary(id))
            .ok()?;
    }
    None
}

fn deref<'a>(doc: &'a Document, obj: &'a Object) -> &'a Object {
    doc.dereference(obj).map(|(_, o)| o).unwrap_or(obj)
}

/// Forms painted from content, followed as pdf-extract follows them: a form
/// without `/Resources` uses its painter's.
struct Walk<'a> {
    doc: &'a Document,
    /// (form, resources' address) -> (parse cost of the deepest nesting, work).
    memo: HashMap<(ObjectId, usize), (u64, u64)>,
    path: Vec<ObjectId>,
}

impl<'a> Walk<'a> {
    /// The parse cost of the costliest form painted from `cost` (nested forms
    /// included) and the work of all of them, each counted as often as painted.
    fn painted(
        &mut self,
        cost: &ParseCost,
        resources: Option<&'a Dictionary>,
    ) -> Result<(u64, u64), Refusal> {
        let mut deepest = 0u64;
        let mut work = 0u64;
        for (name, times) in &cost.painted {
            let Some((id, stream)) = self.xobject(resources, name) else {
                continue;
            };
            let (parse, each) = self.form(id, stream, resources)?;
            deepest = deepest.max(parse);
            work = work.saturating_add(each.saturating_mul(*times));
            if work > MAX_PAGE_WORK {
                break;
            }
        }
        Ok((deepest, work))
    }

    fn xobject(
        &self,
        resources: Option<&'a Dictionary>,
        name: &[u8],
    ) -> Option<(ObjectId, &'a Stream)> {
        let xobjects = deref(self.doc, resources?.get(b"XObject").ok()?)
            .as_dict()
            .ok()?;
        let reference = xobjects.get(name).ok()?;
        let id = reference.as_reference().ok()?;
        Some((id, deref(self.doc, reference).as_stream().ok()?))
    }

    fn form(
        &mut self,
        id: ObjectId,
        stream: &'a Stream,
        painter: Option<&'a Dictionary>,
    ) -> Result<(u64, u64), Refusal> {
        if self.path.contains(&id) {
            return Err(format!("XObject {} paints itself", name_of(id)));
        }
        let resources = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|r| deref(self.doc, r).as_dict().ok())
            .or(painter);
        let key = (id, resources.map_or(0, |r| r as *const Dictionary as usize));
        if let Some(&known) = self.memo.get(&key) {
            return Ok(known);
        }
        let mut cost = ParseCost::new();
        inflated_len(stream, MAX_STREAM_BYTES, &mut cost);
        cost.finish();
        self.path.push(id);
        let inner = self.painted(&cost, resources);
        self.path.pop();
        let (parse, work) = inner?;
        let result = (
            parse.saturating_add(cost.bytes).saturating_add(cost.len),
            work.saturating_add(cost.len),
        );
        self.memo.insert(key, result);
        Ok(result)
    }
}

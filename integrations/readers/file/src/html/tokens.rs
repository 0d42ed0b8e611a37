//! An HTML page as a stream of tags and text: html5ever's tokenizer fed a
//! chunk at a time, switched into raw text where a tree builder would be.

use super::super::util::{PartReader, Utf8};
use html5ever::TokenizerResult;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use std::cell::{Cell, RefCell};
use std::io::BufRead;

/// How many elements may be open at once. Past it a start tag is read as
/// an empty element, so a page of unclosed tags keeps a bounded stack.
pub(crate) const MAX_OPEN: usize = 4096;

/// Counts of the open elements by name, so that an end tag whose element
/// is not open costs nothing however deep the stack is.
#[derive(Default)]
pub(crate) struct OpenNames(std::collections::HashMap<String, usize>);

impl OpenNames {
    pub(crate) fn opened(&mut self, name: &str) {
        match self.0.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.0.insert(name.to_string(), 1);
            }
        }
    }

    pub(crate) fn closed(&mut self, name: &str) {
        if let Some(n) = self.0.get_mut(name) {
            *n = n.saturating_sub(1);
        }
    }

    pub(crate) fn is_open(&self, name: &str) -> bool {
        self.0.get(name).is_some_and(|n| *n > 0)
    }
}

/// Elements that never have content (`<br>`, `<img>`...): never opened.
pub(crate) const VOID: [&str; 16] = [
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "hr", "img", "input", "keygen",
    "link", "meta", "param", "source", "track",
];

/// What a reader of the stream is told, in document order.
pub(crate) trait Handler {
    /// A start tag; `empty` for a void or self-closed element, which gets no
    /// end tag.
    fn start(&mut self, name: &str, id: Option<&str>, empty: bool);
    /// An end tag.
    fn end(&mut self, name: &str);
    /// Text (character references decoded); one text may come in pieces.
    fn text(&mut self, text: &str);
    /// A comment's text.
    fn comment(&mut self, _text: &str) {}
}

struct Sink<H> {
    handler: RefCell<H>,
    /// Open `<svg>` and `<math>` elements: inside them no element is raw text.
    foreign: Cell<u32>,
}

impl<H: Handler> TokenSink for Sink<H> {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut handler = self.handler.borrow_mut();
        match token {
            Token::TagToken(tag) => {
                let name: &str = &tag.name;
                let foreign = name == "svg" || name == "math";
                if tag.kind == TagKind::EndTag {
                    if foreign {
                        self.foreign.set(self.foreign.get().saturating_sub(1));
                    }
                    handler.end(name);
                    return TokenSinkResult::Continue;
                }
                let empty = tag.self_closing || VOID.contains(&name);
                let id = tag
                    .attrs
                    .iter()
                    .find(|a| &*a.name.local == "id")
                    .map(|a| &*a.value);
                handler.start(name, id, empty);
                if empty {
                    return TokenSinkResult::Continue;
                }
                if foreign {
                    self.foreign.set(self.foreign.get().saturating_add(1));
                }
                if self.foreign.get() > 0 {
                    return TokenSinkResult::Continue;
                }
                match name {
                    "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                    "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                        TokenSinkResult::RawData(RawKind::Rawtext)
                    }
                    "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
                    "plaintext" => TokenSinkResult::Plaintext,
                    _ => TokenSinkResult::Continue,
                }
            }
            Token::CharacterTokens(text) => {
                handler.text(&text);
                TokenSinkResult::Continue
            }
            Token::CommentToken(text) => {
                handler.comment(&text);
                TokenSinkResult::Continue
            }
            // NUL in text is dropped, as a tree builder drops it; doctypes,
            // parse errors and the end carry no text.
            _ => TokenSinkResult::Continue,
        }
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        // `<![CDATA[...]]>` is text inside SVG and MathML, a comment elsewhere.
        self.foreign.get() > 0
    }
}

/// Runs `handler` over the page `input` yields, a chunk at a time; what is
/// held is the handler's state and the tokenizer's current token. The
/// handler comes back with the error that stopped the reading, if one did.
pub(crate) fn read<H: Handler, R: std::io::Read>(
    input: &mut PartReader<R>,
    handler: H,
) -> (H, std::io::Result<()>) {
    let tokenizer = Tokenizer::new(
        Sink {
            handler: RefCell::new(handler),
            foreign: Cell::new(0),
        },
        TokenizerOpts::default(),
    );
    let queue = BufferQueue::default();
    let fed = (|| {
        loop {
            let chunk = input.fill_buf()?;
            if chunk.is_empty() {
                return Ok(());
            }
            let len = chunk.len();
            // The part reader hands out whole characters only.
            let text = std::str::from_utf8(chunk).map_err(std::io::Error::other)?;
            queue.push_back(StrTendril::from_slice(text));
            input.consume(len);
            feed(&tokenizer, &queue);
        }
    })();
    if fed.is_ok() {
        tokenizer.end();
    }
    (tokenizer.sink.handler.into_inner(), fed)
}

/// Runs `handler` over a page held in memory.
pub(crate) fn read_str<H: Handler>(source: &str, handler: H) -> H {
    let mut input = PartReader::new(source.as_bytes(), u64::MAX, Utf8::Lossy).unbounded_events();
    // Reading a `&str` cannot fail: it is UTF-8 and has no byte limit.
    read(&mut input, handler).0
}

fn feed<S: TokenSink<Handle = ()>>(tokenizer: &Tokenizer<S>, queue: &BufferQueue) {
    // Only a `Script` result pauses the tokenizer, and the sink never asks
    // for one; the loop is there should that ever change.
    while let TokenizerResult::Script(()) = tokenizer.feed(queue) {}
}

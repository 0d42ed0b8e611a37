//! An estimate of the memory lopdf takes to parse a content stream into its
//! `Vec<Operation>`, read from the stream's bytes as they inflate.

use std::io::{self, Write};

/// One `Operation` (48 bytes, twice over for its vector's growth), its
/// operator's `String`, and the room for four operands (120 bytes each)
/// that nom's `many0` reserves for every operator, even `q`.
const PER_OPERATOR: u64 = 48 * 2 + 32 + 4 * 120;
/// One `Object` (120 bytes) beyond the reserved four, or in an array.
const PER_OPERAND: u64 = 128;
/// An array: its `Object` and the four elements `many0` reserves.
const PER_ARRAY: u64 = 128 + 4 * 120;
/// Allocation overhead of a name's or string's bytes.
const PER_ALLOCATION: u64 = 32;

#[derive(Clone, Copy, PartialEq)]
enum State {
    Between,
    /// A number, name or operator; `bool` is whether it starts a name.
    Word,
    Text {
        depth: u32,
        escaped: bool,
    },
    Hex,
    AfterLess,
    Comment,
}

/// A `Write` sink that tokenises a content stream and tallies its parse cost,
/// and the XObject names it paints (`/Name Do`).
pub(crate) struct ParseCost {
    state: State,
    word: Vec<u8>,
    last_name: Option<Vec<u8>>,
    /// Estimated bytes of the parsed operations.
    pub(crate) bytes: u64,
    /// Bytes of content seen.
    pub(crate) len: u64,
    /// `(name, times)` of every XObject painted.
    pub(crate) painted: Vec<(Vec<u8>, u64)>,
    /// lopdf stops at a byte no token starts with, unless an inline image's
    /// binary data came first (it skips that, and so may go on).
    stopped: bool,
    inline_image: bool,
}

impl ParseCost {
    pub(crate) fn new() -> Self {
        Self {
            state: State::Between,
            word: Vec::new(),
            last_name: None,
            bytes: 0,
            len: 0,
            painted: Vec::new(),
            stopped: false,
            inline_image: false,
        }
    }

    fn byte(&mut self, b: u8) {
        match self.state {
            State::Comment => {
                if b == b'\r' || b == b'\n' {
                    self.state = State::Between;
                }
            }
            State::Text { depth, escaped } => self.text(b, depth, escaped),
            State::Hex => {
                self.bytes += 1;
                if b == b'>' {
                    self.state = State::Between;
                }
            }
            State::AfterLess => {
                if b == b'<' {
                    self.bytes += PER_OPERAND;
                    self.state = State::Between;
                } else {
                    self.state = State::Hex;
                    self.byte(b);
                }
            }
            State::Word => {
                if is_regular(b) && b != b'/' {
                    if self.word.len() < 64 {
                        self.word.push(b);
                    }
                    self.bytes += u64::from(self.word.first() == Some(&b'/'));
                } else {
                    self.end_word();
                    self.between(b);
                }
            }
            State::Between => self.between(b),
        }
    }

    fn text(&mut self, b: u8, depth: u32, escaped: bool) {
        self.bytes += 1;
        self.state = match (escaped, b) {
            (true, _) => State::Text {
                depth,
                escaped: false,
            },
            (false, b'\\') => State::Text {
                depth,
                escaped: true,
            },
            (false, b'(') => State::Text {
                depth: depth + 1,
                escaped: false,
            },
            (false, b')') if depth <= 1 => State::Between,
            (false, b')') => State::Text {
                depth: depth - 1,
                escaped: false,
            },
            _ => State::Text { depth, escaped },
        };
    }

    fn between(&mut self, b: u8) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' | b']' | b'>' => {}
            b'%' => self.state = State::Comment,
            b'(' => {
                self.operand();
                self.state = State::Text {
                    depth: 1,
                    escaped: false,
                };
            }
            b'<' => {
                self.operand();
                self.state = State::AfterLess;
            }
            b'[' => self.bytes += PER_ARRAY,
            _ if is_regular(b) && b.is_ascii_graphic() => {
                self.word.clear();
                self.word.push(b);
                self.state = State::Word;
            }
            _ if self.inline_image => {}
            _ => self.stopped = true,
        }
    }

    fn operand(&mut self) {
        self.bytes += PER_OPERAND + PER_ALLOCATION;
    }

    fn end_word(&mut self) {
        self.state = State::Between;
        let word = std::mem::take(&mut self.word);
        let operator = word
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || b"*'\"".contains(c))
            && !matches!(&word[..], b"true" | b"false" | b"null");
        if !operator {
            self.operand();
            self.last_name = word.strip_prefix(b"/").map(<[u8]>::to_vec);
            self.word = word;
            return;
        }
        self.bytes += PER_OPERATOR;
        match &word[..] {
            b"Do" => {
                if let Some(name) = self.last_name.take() {
                    self.paint(name);
                }
            }
            b"ID" => self.inline_image = true,
            _ => {}
        }
        self.word = word;
    }

    fn paint(&mut self, name: Vec<u8>) {
        match self.painted.iter_mut().find(|(n, _)| *n == name) {
            Some((_, times)) => *times += 1,
            None => self.painted.push((name, 1)),
        }
    }

    /// Ends the stream: a last word is a token too.
    pub(crate) fn finish(&mut self) {
        if self.state == State::Word {
            self.end_word();
        }
    }
}

/// Not whitespace or a delimiter (PDF 32000-1, 7.2.2).
fn is_regular(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t'
            | b'\r'
            | b'\n'
            | 0
            | 0x0c
            | b'('
            | b')'
            | b'<'
            | b'>'
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'/'
            | b'%'
    ) || b == b'/'
}

impl Write for ParseCost {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len += buf.len() as u64;
        for &b in buf {
            if self.stopped {
                break;
            }
            self.byte(b);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(content: &[u8]) -> ParseCost {
        let mut c = ParseCost::new();
        c.write_all(content).unwrap_or_default();
        c.finish();
        c
    }

    #[test]
    fn operators_cost_most_and_binary_stops_the_estimate() {
        let dense = cost(&b"q Q ".repeat(1000));
        assert_eq!(dense.bytes, 2000 * PER_OPERATOR);
        let binary = cost(b"q \xff\xfe q Q q Q");
        assert_eq!(binary.bytes, PER_OPERATOR);
        // Strings are one operand however many words they hold.
        let text = cost(b"BT /F1 12 Tf (a b c d) Tj ET");
        let floor = 4 * PER_OPERATOR + 3 * (PER_OPERAND + PER_ALLOCATION);
        assert!(
            text.bytes >= floor && text.bytes < floor + 16,
            "{}",
            text.bytes
        );
    }

    #[test]
    fn painted_xobjects_are_counted() {
        let c = cost(b"q /Fm1 Do Q /Fm1 Do /Im2 Do");
        assert_eq!(c.painted, vec![(b"Fm1".to_vec(), 2), (b"Im2".to_vec(), 1)]);
    }
}

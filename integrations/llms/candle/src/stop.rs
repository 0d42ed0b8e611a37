//! Stop sequences over streamed text: emits only text that cannot be the
//! start of a stop string, so a stop split across tokens never leaks into the output.

/// Follows the decoded text of a generation and decides what may be emitted.
#[derive(Debug)]
pub(crate) struct StopScanner {
    stops: Vec<String>,
    /// Bytes of the decoded text already emitted.
    emitted: usize,
}

/// What one step of the scanner allows.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// Text to emit now (may be empty).
    pub delta: String,
    /// A stop string was found: generation ends, the stop itself is not emitted.
    pub stopped: bool,
}

impl StopScanner {
    pub(crate) fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            emitted: 0,
        }
    }

    /// Takes the whole decoded text so far. A trailing U+FFFD is a character
    /// whose bytes are not all generated yet, so it is held back.
    pub(crate) fn step(&mut self, text: &str) -> Step {
        let settled = text.trim_end_matches('\u{FFFD}');
        let pending = settled.get(self.emitted..).unwrap_or("");
        let first_stop = self
            .stops
            .iter()
            .filter_map(|stop| pending.find(stop.as_str()))
            .min();
        if let Some(at) = first_stop {
            let delta = pending[..at].to_owned();
            self.emitted += at;
            return Step {
                delta,
                stopped: true,
            };
        }
        let keep = self.held_back(pending);
        let delta = pending[..pending.len() - keep].to_owned();
        self.emitted += delta.len();
        Step {
            delta,
            stopped: false,
        }
    }

    /// The rest of the text once generation ends without a stop string.
    pub(crate) fn finish(&mut self, text: &str) -> String {
        let rest = text.get(self.emitted..).unwrap_or("").to_owned();
        self.emitted = text.len();
        rest
    }

    /// Bytes of the text emitted so far.
    pub(crate) fn emitted(&self) -> usize {
        self.emitted
    }

    /// Length of the longest suffix of `pending` that begins some stop string.
    fn held_back(&self, pending: &str) -> usize {
        pending
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &pending[i..];
                self.stops.iter().any(|stop| stop.starts_with(tail))
            })
            .map_or(0, |i| pending.len() - i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], pieces: &[&str]) -> (String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut scanner = StopScanner::new(&stops);
        let mut text = String::new();
        let mut out = String::new();
        for piece in pieces {
            text.push_str(piece);
            let step = scanner.step(&text);
            out.push_str(&step.delta);
            if step.stopped {
                return (out, true);
            }
        }
        out.push_str(&scanner.finish(&text));
        (out, false)
    }

    #[test]
    fn stop_split_across_tokens_is_cut() {
        assert_eq!(
            run(&["\nQuestion:"], &["Lutz", ".\n", "Quest", "ion:", " more"]),
            ("Lutz.".to_string(), true)
        );
    }

    #[test]
    fn held_back_prefix_is_released_when_it_does_not_complete() {
        let stops: Vec<String> = vec!["END".into()];
        let mut scanner = StopScanner::new(&stops);
        assert_eq!(scanner.step("abcE").delta, "abc");
        assert_eq!(scanner.step("abcEN").delta, "");
        let step = scanner.step("abcENx");
        assert_eq!(step.delta, "ENx");
        assert!(!step.stopped);
    }

    #[test]
    fn earliest_stop_wins_and_text_without_stop_passes() {
        assert_eq!(run(&["b", "a"], &["xxab"]), ("xx".to_string(), true));
        assert_eq!(run(&[], &["one ", "two"]), ("one two".to_string(), false));
        assert_eq!(
            run(&["zz"], &["one ", "twoz"]),
            ("one twoz".to_string(), false)
        );
    }

    #[test]
    fn incomplete_character_is_held_back() {
        let mut scanner = StopScanner::new(&[]);
        assert_eq!(scanner.step("é\u{FFFD}").delta, "é");
        assert_eq!(scanner.step("éü").delta, "ü");
    }
}

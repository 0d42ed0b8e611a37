//! A hash map keyed by strings that packs keys under 16 bytes into one
//! integer: looking up a word costs one `u128` hash and compare, no `memcmp`.

use rustc_hash::FxHashMap;

/// Counts and ids of words and word pieces, the tokenizers' caches. Most
/// keys are short, so they live in the integer-keyed map; the rest in a
/// string-keyed one.
#[derive(Debug)]
pub(crate) struct StrMap<V> {
    short: FxHashMap<u128, V>,
    long: FxHashMap<Box<str>, V>,
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        Self {
            short: FxHashMap::default(),
            long: FxHashMap::default(),
        }
    }
}

/// A key under 16 bytes as one integer: its bytes, zeros, and its length
/// in the last byte, so two keys pack equal exactly when they are equal.
fn pack(key: &str) -> Option<u128> {
    let bytes = key.as_bytes();
    if bytes.len() >= 16 {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..bytes.len()].copy_from_slice(bytes);
    buf[15] = bytes.len() as u8;
    Some(u128::from_le_bytes(buf))
}

impl<V> StrMap<V> {
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        match pack(key) {
            Some(k) => self.short.get(&k),
            None => self.long.get(key),
        }
    }

    pub(crate) fn insert(&mut self, key: &str, value: V) {
        match pack(key) {
            Some(k) => self.short.insert(k, value),
            None => self.long.insert(key.into(), value),
        };
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    pub(crate) fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_every_length_are_told_apart() {
        let keys = [
            "",
            "a",
            "a\0",
            "\0",
            "ab",
            "ba",
            "fifteen_bytes__",
            "sixteen_bytes___",
            "sixteen_bytes__!",
            "東京",
            "東京\0",
            "a much longer key than sixteen bytes",
        ];
        let mut map = StrMap::default();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k), None, "{k:?}");
            map.insert(k, i);
        }
        assert_eq!(map.len(), keys.len());
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k), Some(&i), "{k:?}");
        }
        map.insert("ab", 99);
        assert_eq!(map.get("ab"), Some(&99));
        assert_eq!(map.len(), keys.len());
        map.clear();
        assert_eq!(map.len(), 0);
        assert_eq!(map.get("a"), None);
    }
}

//! A hash map keyed by strings that packs keys under 16 bytes into one
//! integer: looking up a word costs one integer hash and compare, no `memcmp`.

use rustc_hash::FxHashMap;

/// Counts and ids of words and word pieces, the tokenizers' caches. Most
/// words are under 8 bytes: their entries take 16 bytes, so a corpus's
/// common words stay in a core's cache (a lookup was mostly a cache miss
/// with 32-byte entries); longer keys live in the other two maps.
#[derive(Debug)]
pub(crate) struct StrMap<V> {
    short: FxHashMap<u64, V>,
    medium: FxHashMap<u128, V>,
    long: FxHashMap<Box<str>, V>,
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        Self {
            short: FxHashMap::default(),
            medium: FxHashMap::default(),
            long: FxHashMap::default(),
        }
    }
}

/// A key as one integer of `N` bytes when it is shorter than `N`: its
/// bytes, zeros, and its length in the last byte, so two keys pack equal
/// exactly when they are equal.
fn pack<const N: usize>(key: &str) -> Option<[u8; N]> {
    let bytes = key.as_bytes();
    if bytes.len() >= N {
        return None;
    }
    let mut buf = [0u8; N];
    buf[..bytes.len()].copy_from_slice(bytes);
    buf[N - 1] = bytes.len() as u8;
    Some(buf)
}

enum Key<'k> {
    Short(u64),
    Medium(u128),
    Long(&'k str),
}

fn key(key: &str) -> Key<'_> {
    if let Some(k) = pack::<8>(key) {
        Key::Short(u64::from_le_bytes(k))
    } else if let Some(k) = pack::<16>(key) {
        Key::Medium(u128::from_le_bytes(k))
    } else {
        Key::Long(key)
    }
}

impl<V> StrMap<V> {
    pub(crate) fn get(&self, k: &str) -> Option<&V> {
        match key(k) {
            Key::Short(k) => self.short.get(&k),
            Key::Medium(k) => self.medium.get(&k),
            Key::Long(k) => self.long.get(k),
        }
    }

    pub(crate) fn insert(&mut self, k: &str, value: V) {
        match key(k) {
            Key::Short(k) => self.short.insert(k, value),
            Key::Medium(k) => self.medium.insert(k, value),
            Key::Long(k) => self.long.insert(k.into(), value),
        };
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.medium.len() + self.long.len()
    }

    pub(crate) fn clear(&mut self) {
        self.short.clear();
        self.medium.clear();
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
            "seven__",
            "eight___",
            "eight__\0",
            "seven\0\0",
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

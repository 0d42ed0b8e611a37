//! A hash map keyed by strings that packs keys under 16 bytes into one
//! integer: looking up a word costs one integer hash and compare, no `memcmp`.

use rustc_hash::FxHashMap;

/// Counts and ids of words and word pieces, the tokenizers' caches. Most
/// words are under 8 bytes: their entries take 16 bytes, so a corpus's
/// common words stay in a core's cache (a lookup was mostly a cache miss
/// with 32-byte entries); longer keys live in the other two maps.
#[derive(Debug)]
pub(crate) struct StrMap<V> {
    /// The short words looked up last, one per slot: a few thousand words
    /// are most of any text, and here they sit in 64 KB, where the full
    /// map's entries are spread over megabytes that miss the core's cache
    /// (its lookups were a sixth of an ingest's time).
    front: Box<[(u64, V)]>,
    short: FxHashMap<u64, V>,
    medium: FxHashMap<u128, V>,
    long: FxHashMap<Box<str>, V>,
}

/// Slots in [`StrMap::front`] (a power of two).
const FRONT_SLOTS: usize = 1 << 12;
/// An empty front slot: no packed short key has a length byte of 255.
const NO_KEY: u64 = u64::MAX;

fn front_slot(k: u64) -> usize {
    (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FRONT_SLOTS.trailing_zeros())) as usize
}

impl<V: Copy + Default> Default for StrMap<V> {
    fn default() -> Self {
        Self {
            front: vec![(NO_KEY, V::default()); FRONT_SLOTS].into_boxed_slice(),
            short: FxHashMap::default(),
            medium: FxHashMap::default(),
            long: FxHashMap::default(),
        }
    }
}

/// Bytes `at..at + N` of `b` as a little-endian integer (`b` holds them).
fn le<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

/// A key under 8 bytes as one integer: its bytes, zeros, and its length in
/// the last byte, so two keys pack equal exactly when they are equal. Read
/// with fixed-size loads, two that overlap where the key is short, rather
/// than a copy of its length (a call to `memcpy` per word, 5% of an ingest).
fn pack_short(b: &[u8]) -> u64 {
    let n = b.len();
    let bytes = match n {
        0 => 0,
        // Three bytes that, with the length, tell every key of 1 to 3 bytes apart.
        1..=3 => u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
        // The first four and the last four: where they overlap they agree.
        _ => {
            let lo = u64::from(u32::from_le_bytes(le::<4>(b, 0)));
            let hi = u64::from(u32::from_le_bytes(le::<4>(b, n - 4)));
            lo | hi << (8 * (n - 4))
        }
    };
    bytes | (n as u64) << 56
}

/// A key of 8 to 15 bytes as one integer, as [`pack_short`] does.
fn pack_medium(b: &[u8]) -> u128 {
    let n = b.len();
    let lo = u128::from(u64::from_le_bytes(le::<8>(b, 0)));
    let hi = u128::from(u64::from_le_bytes(le::<8>(b, n - 8)));
    (lo | hi << (8 * (n - 8))) | (n as u128) << 120
}

enum Key<'k> {
    Short(u64),
    Medium(u128),
    Long(&'k str),
}

fn key(key: &str) -> Key<'_> {
    let b = key.as_bytes();
    match b.len() {
        0..8 => Key::Short(pack_short(b)),
        8..16 => Key::Medium(pack_medium(b)),
        _ => Key::Long(key),
    }
}

impl<V: Copy + Default> StrMap<V> {
    /// The value of `k`; a short key found is kept in the front slots.
    pub(crate) fn get(&mut self, k: &str) -> Option<V> {
        match key(k) {
            Key::Short(k) => {
                let slot = &mut self.front[front_slot(k)];
                if slot.0 == k {
                    return Some(slot.1);
                }
                let v = *self.short.get(&k)?;
                *slot = (k, v);
                Some(v)
            }
            Key::Medium(k) => self.medium.get(&k).copied(),
            Key::Long(k) => self.long.get(k).copied(),
        }
    }

    pub(crate) fn insert(&mut self, k: &str, value: V) {
        match key(k) {
            Key::Short(k) => {
                self.front[front_slot(k)] = (k, value);
                self.short.insert(k, value);
            }
            Key::Medium(k) => {
                self.medium.insert(k, value);
            }
            Key::Long(k) => {
                self.long.insert(k.into(), value);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.medium.len() + self.long.len()
    }

    pub(crate) fn clear(&mut self) {
        self.front.fill((NO_KEY, V::default()));
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
            assert_eq!(map.get(k), Some(i), "{k:?}");
        }
        map.insert("ab", 99);
        assert_eq!(map.get("ab"), Some(99));
        assert_eq!(map.len(), keys.len());
        map.clear();
        assert_eq!(map.len(), 0);
        assert_eq!(map.get("a"), None);
    }

    /// Two short keys in the same front slot each keep their own value,
    /// whichever was looked up last, through updates and a clear.
    #[test]
    fn keys_sharing_a_front_slot_keep_their_values() {
        let keys: Vec<String> = (0..10_000).map(|i| format!("k{i}")).collect();
        let slot = |k: &str| match key(k) {
            Key::Short(p) => front_slot(p),
            _ => unreachable!(),
        };
        let (a, b) = keys
            .iter()
            .enumerate()
            .find_map(|(i, a)| {
                keys[..i]
                    .iter()
                    .find(|b| slot(b) == slot(a))
                    .map(|b| (a, b))
            })
            .unwrap();
        let mut map = StrMap::default();
        map.insert(a, 1u32);
        map.insert(b, 2);
        for _ in 0..3 {
            assert_eq!((map.get(a), map.get(b)), (Some(1), Some(2)));
        }
        map.insert(a, 3);
        assert_eq!(
            (map.get(b), map.get(a), map.get(b)),
            (Some(2), Some(3), Some(2))
        );
        map.clear();
        assert_eq!((map.get(a), map.get(b)), (None, None));
    }

    /// Every short key, and many others, packs to its own integer: the map
    /// agrees with a map of strings.
    #[test]
    fn packed_keys_are_as_distinct_as_the_strings() {
        let alphabet = ["a", "b", "\0", "é"];
        let mut keys = vec![String::new()];
        // Every key of up to four symbols (up to eight bytes), then random longer ones.
        for _ in 0..4 {
            let longer: Vec<String> = keys
                .iter()
                .flat_map(|k| alphabet.iter().map(move |c| format!("{k}{c}")))
                .collect();
            keys.extend(longer);
        }
        let mut seed: u64 = 3;
        for _ in 0..5_000 {
            let mut k = String::new();
            for _ in 0..(seed % 19) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                k.push_str(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            seed = seed.wrapping_add(1);
            keys.push(k);
        }
        let mut map = StrMap::default();
        let mut want = std::collections::HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k), want.get(k.as_str()).copied(), "{k:?}");
            map.insert(k, i);
            want.insert(k.as_str(), i);
        }
        assert_eq!(map.len(), want.len());
        for (k, v) in &want {
            assert_eq!(map.get(k), Some(*v), "{k:?}");
        }
    }
}

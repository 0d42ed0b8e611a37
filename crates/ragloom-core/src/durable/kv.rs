//! The key-value collections of a build as an object-safe trait, so the
//! manifest and the file records are read and written the same way in every store.

use crate::error::Result;
use crate::storage::kvstore::{KvBackend, KvTable};
use std::fmt;

/// A [`KvBackend`] behind `dyn`: every key-value store of the workspace is one.
pub trait DynKv: Send + Sync + fmt::Debug {
    /// Runs `f` on one consistent view of the collections.
    fn read_dyn(&self, f: &mut dyn FnMut(&mut dyn KvTable) -> Result<()>) -> Result<()>;
    /// Runs `f` so that its writes land together.
    fn write_dyn(&self, f: &mut dyn FnMut(&mut dyn KvTable) -> Result<()>) -> Result<()>;
}

impl<B: KvBackend> DynKv for B {
    fn read_dyn(&self, f: &mut dyn FnMut(&mut dyn KvTable) -> Result<()>) -> Result<()> {
        self.read(|t| f(t))
    }

    fn write_dyn(&self, f: &mut dyn FnMut(&mut dyn KvTable) -> Result<()>) -> Result<()> {
        self.write(|t| f(t))
    }
}

/// Copies `collections` of `from` into a new in-memory kv store, values
/// untouched, so hashes and ids are exactly the stored ones.
pub fn copy_collections(
    from: &dyn DynKv,
    collections: &[String],
) -> Result<std::sync::Arc<crate::storage::kvstore::SimpleKVStore>> {
    let kv = std::sync::Arc::new(crate::storage::kvstore::SimpleKVStore::new());
    from.read_dyn(&mut |from| {
        kv.write(|to| {
            for c in collections {
                let all = from.get_all(c)?.into_owned();
                for (key, value) in all {
                    to.put(&key, value, c)?;
                }
            }
            Ok(())
        })
    })?;
    Ok(kv)
}

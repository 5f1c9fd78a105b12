//! What many sessions resolve alike, kept once. A server may hold thousands of sessions in
//! one workspace, and each resolves the same sandbox: the same protected paths, the same
//! paths for the plant guard to watch. A table keyed by what a value is made from hands out
//! the one copy while any session holds it, and forgets it when none does.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Values of type `V` made from keys of type `K`, each kept once while in use.
pub(super) struct Shared<K, V: ?Sized> {
    table: OnceLock<Mutex<HashMap<K, Weak<V>>>>,
}

impl<K: Hash + Eq, V: ?Sized> Shared<K, V> {
    /// An empty table (for a `static`).
    pub(super) const fn new() -> Self {
        Shared {
            table: OnceLock::new(),
        }
    }

    /// The value made from `key`: the one in use, or `make()`'s.
    pub(super) fn get_or_make(&self, key: K, make: impl FnOnce(&K) -> Arc<V>) -> Arc<V> {
        let mut table = self
            .table
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(value) = table.get(&key).and_then(Weak::upgrade) {
            return value;
        }
        let value = make(&key);
        // What no session holds any more goes, so the table holds only what is in use.
        table.retain(|_, value| value.strong_count() > 0);
        table.insert(key, Arc::downgrade(&value));
        value
    }
}

/// The one copy of a list of paths.
pub(super) fn paths(list: Vec<std::path::PathBuf>) -> Arc<[std::path::PathBuf]> {
    static PATHS: Shared<Vec<std::path::PathBuf>, [std::path::PathBuf]> = Shared::new();
    PATHS.get_or_make(list, |list| list.as_slice().into())
}

/// The one copy of a text.
pub(super) fn text(text: String) -> Arc<str> {
    static TEXTS: Shared<String, str> = Shared::new();
    TEXTS.get_or_make(text, |text| text.as_str().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_lists_share_one_copy_while_held_and_a_dropped_one_is_forgotten() {
        let a = paths(vec!["/a".into(), "/b".into()]);
        let b = paths(vec!["/a".into(), "/b".into()]);
        assert!(Arc::ptr_eq(&a, &b));
        let other = paths(vec!["/a".into()]);
        assert!(!Arc::ptr_eq(&a, &other));
        assert_eq!(&*other, &[std::path::PathBuf::from("/a")]);
        let weak = Arc::downgrade(&a);
        drop((a, b));
        assert!(weak.upgrade().is_none());
    }
}

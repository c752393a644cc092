//! Worker threads. Every parallel section runs inside the pool of its audit
//! or index; loops that poll for interruption stay on the caller's thread.

use std::sync::Arc;

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{invalid, Result};

/// A pool of `threads` workers (0: one per core).
pub fn pool(threads: usize) -> Result<Arc<ThreadPool>> {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("tame-mt-{i}"))
        .build()
        .map(Arc::new)
        .map_err(|e| invalid("threads", e.to_string()))
}

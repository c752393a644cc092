//! A hint to the processor to fetch memory that is about to be read.

/// Ask for the cache line of `values[at]` ahead of its use: a hint only,
/// nothing when `at` is out of range or the target has no such hint.
#[inline]
pub(crate) fn prefetch<T>(values: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(value) = values.get(at) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86_64, and a prefetch never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (values, at);
}

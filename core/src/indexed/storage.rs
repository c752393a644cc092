//! Flat arrays that are either owned or borrowed from memory that something
//! else keeps alive and unchanged (a memory-mapped index file). Readers see a
//! plain slice either way, so the search code does not know the difference.

use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::{invalid, Result};

/// Element types that can be read from raw little-endian bytes.
pub trait Plain: Copy + Send + Sync + 'static {}
impl Plain for u8 {}
impl Plain for u32 {}
impl Plain for u64 {}

/// A 128-bit key stored as two little-endian 64-bit halves (low first), so it
/// needs only 8-byte alignment: what Arrow IPC guarantees for a buffer in a
/// file. Ordered as the `u128` it holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
#[repr(C)]
pub struct Key128([u64; 2]);

impl Key128 {
    pub fn get(self) -> u128 {
        (self.0[0] as u128) | ((self.0[1] as u128) << 64)
    }
}

impl From<u128> for Key128 {
    fn from(v: u128) -> Self {
        Key128([v as u64, (v >> 64) as u64])
    }
}

impl PartialOrd for Key128 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key128 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.get().cmp(&other.get())
    }
}

impl Plain for Key128 {}

/// Keeps borrowed memory alive (and unchanged) while an array points into it.
pub type Keeper = Arc<dyn Send + Sync>;

enum Inner<T: Plain> {
    Owned(Vec<T>),
    Borrowed {
        ptr: NonNull<T>,
        len: usize,
        _keep: Keeper,
    },
}

pub struct Array<T: Plain> {
    inner: Inner<T>,
}

// SAFETY: borrowed memory is immutable while `_keep` lives, and `T` is plain data.
unsafe impl<T: Plain> Send for Array<T> {}
unsafe impl<T: Plain> Sync for Array<T> {}

impl<T: Plain> Array<T> {
    /// An array over `len_bytes` bytes at `ptr`, which `keep` holds alive and
    /// unchanged. Refuses a length that is not a whole number of elements and
    /// a pointer not aligned for `T`.
    ///
    /// # Safety
    /// `ptr .. ptr + len_bytes` must be readable and must not change while
    /// `keep` is alive.
    pub unsafe fn borrowed(
        name: &str,
        ptr: *const u8,
        len_bytes: usize,
        keep: Keeper,
    ) -> Result<Array<T>> {
        let size = std::mem::size_of::<T>();
        if !len_bytes.is_multiple_of(size) {
            return Err(invalid(
                name,
                format!("{len_bytes} bytes is not a whole number of {size}-byte values"),
            ));
        }
        if len_bytes == 0 {
            return Ok(Array::from(Vec::new()));
        }
        if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(invalid(
                name,
                format!(
                    "buffer is not aligned to {} bytes",
                    std::mem::align_of::<T>()
                ),
            ));
        }
        let ptr = NonNull::new(ptr as *mut T).ok_or_else(|| invalid(name, "null buffer"))?;
        Ok(Array {
            inner: Inner::Borrowed {
                ptr,
                len: len_bytes / size,
                _keep: keep,
            },
        })
    }

    pub fn is_borrowed(&self) -> bool {
        matches!(self.inner, Inner::Borrowed { .. })
    }

    /// The elements as raw bytes (little-endian on the platforms supported).
    pub fn as_bytes(&self) -> &[u8] {
        let s: &[T] = self;
        // SAFETY: plain data viewed as bytes, same memory and lifetime.
        unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
    }

    pub fn nbytes(&self) -> usize {
        self.as_bytes().len()
    }

    /// Let borrowed pages of a read-only file mapping leave this process's
    /// resident memory: they stay in the page cache and are mapped again when
    /// next touched. Owned arrays, and borrowed memory of any other kind, are
    /// left alone.
    pub fn release_resident(&self) {
        if let Inner::Borrowed { ptr, len, .. } = &self.inner {
            release_pages(ptr.as_ptr() as *const u8, len * std::mem::size_of::<T>());
        }
    }
}

/// Whether `[first, end)` lies inside one mapping of a file that this process
/// cannot write, by `/proc/self/maps` (`start-end perms offset dev inode path`).
#[cfg(target_os = "linux")]
fn in_read_only_file_mapping(maps: &str, first: usize, end: usize) -> bool {
    maps.lines().any(|line| {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        let [range, perms, _, _, inode, path, ..] = fields[..] else {
            return false;
        };
        let bounds = range.split_once('-').and_then(|(lo, hi)| {
            Some((
                usize::from_str_radix(lo, 16).ok()?,
                usize::from_str_radix(hi, 16).ok()?,
            ))
        });
        matches!(bounds, Some((lo, hi)) if lo <= first && end <= hi)
            && perms.starts_with('r')
            && !perms.contains('w')
            && inode != "0"
            && path.starts_with('/')
    })
}

#[cfg(target_os = "linux")]
fn release_pages(start: *const u8, len: usize) {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let first = start as usize / page * page;
    let end = (start as usize + len).div_ceil(page) * page;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    if first == end || !in_read_only_file_mapping(&maps, first, end) {
        return;
    }
    // SAFETY: on a mapping of a file that this process cannot write (and never
    // could: a read-only memory map, as pyarrow's, is made so and stays so), no
    // page holds anything but the file's content, so MADV_DONTNEED only drops this
    // process's page-table entries: a page touched again is mapped again from
    // the page cache (which the advice leaves warm) or the file. Heap memory
    // (where DONTNEED would hand back zeroed pages) never gets here.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
    }
}

#[cfg(not(target_os = "linux"))]
fn release_pages(_start: *const u8, _len: usize) {}

impl<T: Plain> Deref for Array<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.inner {
            Inner::Owned(v) => v,
            // SAFETY: checked at construction; `_keep` holds the memory.
            Inner::Borrowed { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Plain> From<Vec<T>> for Array<T> {
    fn from(v: Vec<T>) -> Self {
        Array {
            inner: Inner::Owned(v),
        }
    }
}

impl<T: Plain> Default for Array<T> {
    fn default() -> Self {
        Array::from(Vec::new())
    }
}

impl<T: Plain> Clone for Array<T> {
    fn clone(&self) -> Self {
        match &self.inner {
            Inner::Owned(v) => Array::from(v.clone()),
            Inner::Borrowed { ptr, len, _keep } => Array {
                inner: Inner::Borrowed {
                    ptr: *ptr,
                    len: *len,
                    _keep: _keep.clone(),
                },
            },
        }
    }
}

impl<T: Plain + fmt::Debug> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_borrowed() {
            "borrowed"
        } else {
            "owned"
        };
        write!(f, "Array({kind}, {} values)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_arrays_read_the_same_values() {
        let owned: Array<u64> = Array::from(vec![1, 2, u64::MAX]);
        let bytes: Arc<Vec<u64>> = Arc::new(owned.to_vec());
        let ptr = bytes.as_ptr() as *const u8;
        let view = unsafe { Array::<u64>::borrowed("x", ptr, 24, bytes.clone()) }.unwrap();
        assert!(view.is_borrowed());
        assert_eq!(&*view, &*owned);
        assert_eq!(view.as_bytes(), owned.as_bytes());
        assert_eq!(&*view.clone(), &[1, 2, u64::MAX]);
    }

    #[test]
    fn releasing_pages_keeps_their_content() {
        // Heap memory, not a file: nothing may be released here.
        let values: Vec<u64> = (0..100_000).map(|i| i * 7 + 3).collect();
        let keep: Arc<Vec<u64>> = Arc::new(values.clone());
        let ptr = keep.as_ptr() as *const u8;
        let view = unsafe { Array::<u64>::borrowed("x", ptr, 8 * 1000, keep.clone()) }.unwrap();
        view.release_resident();
        assert_eq!(&*view, &values[..1000]);
        assert_eq!(&**keep, &values);
    }

    /// A read-only mapping of a file with `values`, unmapped when dropped.
    #[cfg(target_os = "linux")]
    struct Mapped(*mut libc::c_void, usize);
    #[cfg(target_os = "linux")]
    unsafe impl Send for Mapped {}
    #[cfg(target_os = "linux")]
    unsafe impl Sync for Mapped {}
    #[cfg(target_os = "linux")]
    impl Drop for Mapped {
        fn drop(&mut self) {
            unsafe { libc::munmap(self.0, self.1) };
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn released_file_pages_are_mapped_again_with_their_content() {
        use std::os::fd::AsRawFd;
        let values: Vec<u64> = (0..200_000).map(|i| i * 11 + 5).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = std::env::temp_dir().join(format!("tame-mt-release-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes.len(),
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED);
        std::fs::remove_file(&path).unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let (first, end) = (ptr as usize, ptr as usize + bytes.len());
        assert!(in_read_only_file_mapping(&maps, first, end));
        assert!(!in_read_only_file_mapping(&maps, first, end + (1 << 30)));
        let heap = values.as_ptr() as usize;
        assert!(!in_read_only_file_mapping(&maps, heap, heap + 8));
        let keep: Keeper = Arc::new(Mapped(ptr, bytes.len()));
        let view =
            unsafe { Array::<u64>::borrowed("x", ptr as *const u8, bytes.len(), keep) }.unwrap();
        assert_eq!(&*view, &values[..]);
        view.release_resident();
        assert_eq!(&*view, &values[..]);
    }

    #[test]
    fn keys_order_as_their_u128() {
        let values = [0u128, 1, u64::MAX as u128, 1 << 64, u128::MAX - 1];
        for a in values {
            assert_eq!(Key128::from(a).get(), a);
            for b in values {
                assert_eq!(Key128::from(a).cmp(&Key128::from(b)), a.cmp(&b));
            }
        }
        assert_eq!(std::mem::align_of::<Key128>(), 8);
    }

    #[test]
    fn bad_lengths_and_alignment_are_refused() {
        let bytes: Arc<Vec<u64>> = Arc::new(vec![0; 4]);
        let ptr = bytes.as_ptr() as *const u8;
        assert!(unsafe { Array::<u64>::borrowed("x", ptr, 7, bytes.clone()) }.is_err());
        let odd = unsafe { ptr.add(4) };
        assert!(unsafe { Array::<u64>::borrowed("x", odd, 8, bytes.clone()) }.is_err());
        assert!(
            unsafe { Array::<u64>::borrowed("x", ptr, 0, bytes.clone()) }
                .unwrap()
                .is_empty()
        );
    }
}

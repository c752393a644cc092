//! The texts of an Arrow string column read in place, from its offsets and
//! data buffers (`string`: 32-bit offsets, `large_string`: 64-bit), with no
//! copy. Buffers come from outside (a memory-mapped file, another library),
//! so a chunk is trusted only after every check: the offsets buffer holds
//! the rows asked for, offsets never decrease and stay inside the data, and
//! every text is valid UTF-8. A failure names the argument and the row.

use crate::error::{invalid, Error, Result};

/// One chunk of a string column: `length` texts from slot `offset` of its
/// offsets, checked.
#[derive(Debug, Clone, Copy)]
pub struct StringChunk<'a> {
    offsets: &'a [u8],
    data: &'a [u8],
    offset: usize,
    length: usize,
    width: usize,
}

fn read_offset(offsets: &[u8], width: usize, slot: usize) -> i64 {
    let bytes = &offsets[slot * width..(slot + 1) * width];
    if width == 4 {
        i32::from_le_bytes(bytes.try_into().expect("four bytes")) as i64
    } else {
        i64::from_le_bytes(bytes.try_into().expect("eight bytes"))
    }
}

impl<'a> StringChunk<'a> {
    /// A chunk whose first text is row `first_row` of `argument` (for errors).
    pub fn new(
        offsets: &'a [u8],
        data: &'a [u8],
        offset: usize,
        length: usize,
        large: bool,
        argument: &str,
        first_row: u64,
    ) -> Result<StringChunk<'a>> {
        let width = if large { 8 } else { 4 };
        let slots = offset
            .checked_add(length)
            .and_then(|n| n.checked_add(1))
            .ok_or_else(|| invalid(argument, "offset and length overflow"))?;
        if offsets.len() / width < slots {
            return Err(invalid(
                argument,
                format!(
                    "the offsets buffer holds {} offsets, {slots} are needed",
                    offsets.len() / width
                ),
            ));
        }
        let chunk = StringChunk {
            offsets,
            data,
            offset,
            length,
            width,
        };
        let mut start = chunk.offset_at(0);
        for i in 0..length {
            let end = chunk.offset_at(i + 1);
            let row = first_row + i as u64;
            if start < 0 || end < start || end as u64 > data.len() as u64 {
                return Err(Error::InvalidText {
                    argument: argument.into(),
                    index: row,
                    message: format!(
                        "offsets {start}..{end} lie outside the {} bytes of text data",
                        data.len()
                    ),
                });
            }
            if let Err(e) = std::str::from_utf8(&data[start as usize..end as usize]) {
                return Err(Error::InvalidText {
                    argument: argument.into(),
                    index: row,
                    message: format!("not valid UTF-8 ({e})"),
                });
            }
            start = end;
        }
        Ok(chunk)
    }

    fn offset_at(&self, i: usize) -> i64 {
        read_offset(self.offsets, self.width, self.offset + i)
    }

    pub fn len(&self) -> usize {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Text `i` of the chunk.
    pub fn get(&self, i: usize) -> &'a str {
        let (start, end) = (self.offset_at(i) as usize, self.offset_at(i + 1) as usize);
        // SAFETY: `new` checked that these bytes lie in `data` and are UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.data[start..end]) }
    }

    /// The bytes of text data the chunk spans.
    pub fn data_bytes(&self) -> u64 {
        (self.offset_at(self.length) - self.offset_at(0)) as u64
    }
}

/// The chunks of a column as one list of texts, rows numbered across chunks.
#[derive(Debug, Clone, Default)]
pub struct StringColumn<'a> {
    chunks: Vec<StringChunk<'a>>,
    /// The first row of each chunk, and the row count at the end.
    starts: Vec<usize>,
}

impl<'a> StringColumn<'a> {
    pub fn new(chunks: Vec<StringChunk<'a>>) -> StringColumn<'a> {
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut rows = 0;
        for c in &chunks {
            starts.push(rows);
            rows += c.len();
        }
        starts.push(rows);
        StringColumn { chunks, starts }
    }

    pub fn len(&self) -> usize {
        *self.starts.last().expect("at least the end")
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Texts `start..end`, borrowed.
    pub fn range(&self, start: usize, end: usize) -> Vec<&'a str> {
        let mut out = Vec::with_capacity(end.saturating_sub(start));
        let mut c = self
            .starts
            .partition_point(|&s| s <= start)
            .saturating_sub(1);
        let mut row = start;
        while row < end {
            let chunk = &self.chunks[c];
            let first = row - self.starts[c];
            let last = (end - self.starts[c]).min(chunk.len());
            out.extend((first..last).map(|i| chunk.get(i)));
            row = self.starts[c] + last;
            c += 1;
        }
        out
    }

    pub fn chunks(&self) -> &[StringChunk<'a>] {
        &self.chunks
    }

    /// Every text, borrowed.
    pub fn all(&self) -> Vec<&'a str> {
        self.range(0, self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets32(values: &[i32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn offsets64(values: &[i64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn texts_are_read_at_their_offsets_in_both_widths() {
        let data = "ab€cd".as_bytes();
        let narrow = offsets32(&[0, 2, 5, 7]);
        let wide = offsets64(&[0, 2, 5, 7]);
        for (offsets, large) in [(&narrow, false), (&wide, true)] {
            let chunk = StringChunk::new(offsets, data, 0, 3, large, "x", 0).unwrap();
            assert_eq!(
                (0..3).map(|i| chunk.get(i)).collect::<Vec<_>>(),
                ["ab", "€", "cd"]
            );
            let sliced = StringChunk::new(offsets, data, 1, 2, large, "x", 0).unwrap();
            assert_eq!((sliced.get(0), sliced.get(1)), ("€", "cd"));
            assert_eq!(sliced.data_bytes(), 5);
        }
    }

    #[test]
    fn ranges_cross_chunks() {
        let (o1, d1) = (offsets32(&[0, 1, 2]), b"ab".as_slice());
        let (o2, d2) = (offsets32(&[0, 1, 2, 3]), b"cde".as_slice());
        let empty = offsets32(&[0]);
        let column = StringColumn::new(vec![
            StringChunk::new(&o1, d1, 0, 2, false, "x", 0).unwrap(),
            StringChunk::new(&empty, b"", 0, 0, false, "x", 2).unwrap(),
            StringChunk::new(&o2, d2, 0, 3, false, "x", 2).unwrap(),
        ]);
        assert_eq!(column.len(), 5);
        assert_eq!(column.all(), ["a", "b", "c", "d", "e"]);
        assert_eq!(column.range(1, 4), ["b", "c", "d"]);
        assert_eq!(column.range(2, 2), Vec::<&str>::new());
        assert_eq!(column.range(4, 5), ["e"]);
    }

    #[test]
    fn damaged_buffers_are_errors_naming_the_row() {
        let data = b"abc\xffd";
        let message = |offsets: &[u8], length| {
            StringChunk::new(offsets, data, 0, length, false, "train", 10)
                .unwrap_err()
                .to_string()
        };
        assert!(message(&offsets32(&[0, 1]), 2).contains("offsets buffer holds 2"));
        assert!(message(&offsets32(&[0, 2, 1]), 2).starts_with("train[11]: offsets 2..1"));
        assert!(message(&offsets32(&[0, 9]), 1).starts_with("train[10]: offsets 0..9"));
        assert!(message(&offsets32(&[-1, 1]), 1).starts_with("train[10]: offsets -1..1"));
        assert!(message(&offsets32(&[0, 3, 5]), 2).starts_with("train[11]: not valid UTF-8"));
        // A text that ends inside a character is not UTF-8 either.
        let (euro, one) = ("€".as_bytes(), offsets32(&[0, 1]));
        let cut = StringChunk::new(&one, euro, 0, 1, false, "t", 0);
        assert!(cut.unwrap_err().to_string().contains("not valid UTF-8"));
        let overflow = StringChunk::new(&[], b"", usize::MAX, 1, true, "t", 0);
        assert!(overflow.is_err());
    }
}

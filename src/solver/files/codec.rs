//! The block code of table files: a layer's values cut into blocks of a
//! fixed number of slots, each block a list of runs of one value, each run
//! one symbol of a canonical Huffman code shared by the whole file (the
//! value and the length's power of two) and the length's lower bits.
//!
//! A block decodes on its own from its first byte, so a probe reads one
//! block and walks its runs to the slot it wants. Slots whose value does
//! not matter (a slot that is no position; in a distance file, a drawn
//! position) lengthen the run they fall in, so they cost nothing.
//!
//! Nothing here knows files or layers: values in, bytes out, and back.

use std::fmt;

/// Longest code of a symbol, in bits.
pub const MAX_CODE_BITS: u32 = 24;

/// Values a file's code may have (the alphabet): distances of up to 510
/// plies, or win/draw/loss.
pub const MAX_VALUES: u32 = 512;

/// What is wrong with a block's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadBlock(pub String);

impl fmt::Display for BadBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Length classes of runs in blocks of `block_slots` slots: a run of `n`
/// slots has class `floor(log2 n)`, so `log2(block_slots) + 1` of them.
pub fn classes(block_slots: u64) -> u32 {
    63 - block_slots.leading_zeros() + 1
}

/// The runs of `values[i]` for `i` in one block, `None` where the value
/// does not matter: each `(value, length)`; a don't-care lengthens the run
/// before it, and leading don't-cares join the first run (all don't-cares:
/// one run of value 0).
pub fn runs(values: impl Iterator<Item = Option<u16>>, mut emit: impl FnMut(u16, u64)) {
    let mut current: Option<u16> = None;
    let mut length = 0u64;
    for value in values {
        match (value, current) {
            (None, _) => length += 1,
            (Some(v), Some(c)) if v == c => length += 1,
            (Some(v), Some(c)) => {
                emit(c, length);
                current = Some(v);
                length = 1;
            }
            (Some(v), None) => {
                current = Some(v);
                length += 1;
            }
        }
    }
    if length > 0 {
        emit(current.unwrap_or(0), length);
    }
}

/// The symbol of a run and its extra bits: `(value * classes + class,
/// length - 2^class, class)`.
fn symbol_of(value: u16, length: u64, classes: u32) -> (u32, u64, u32) {
    let class = 63 - length.leading_zeros();
    (
        u32::from(value) * classes + class,
        length - (1 << class),
        class,
    )
}

/// The context of a run: with one context, 0; with more, 0 for a block's
/// first run and one more than the run before's value for the others
/// (which must be below `contexts - 1`).
fn context_of(before: Option<u16>, contexts: u32) -> usize {
    match before {
        Some(value) if contexts > 1 => usize::from(value) + 1,
        _ => 0,
    }
}

/// The code of a file: for each context (see [`context_of`]) a canonical
/// Huffman code over `values * classes` symbols.
#[derive(Clone, Debug)]
pub struct Code {
    classes: u32,
    tables: Vec<Table>,
    /// Each symbol's length in bits, the contexts' one after the other.
    lengths: Vec<u8>,
}

/// One canonical Huffman code.
#[derive(Clone, Debug)]
struct Table {
    /// Bits of each symbol's code, 0 for a symbol never used.
    lengths: Vec<u8>,
    /// Each symbol's code (its low `lengths[s]` bits), for writing.
    codes: Vec<u32>,
    /// For decoding: per length, the first code, the number of codes and
    /// where its symbols start in `sorted`.
    first: [u32; MAX_CODE_BITS as usize + 2],
    count: [u32; MAX_CODE_BITS as usize + 2],
    start: [u32; MAX_CODE_BITS as usize + 2],
    sorted: Vec<u32>,
    /// For codes of at most [`FAST_BITS`] bits: by the next [`FAST_BITS`]
    /// bits of a block, the symbol they start with and its length
    /// (`symbol << 5 | length`; 0 for a longer code).
    fast: Vec<u32>,
}

/// Bits a [`Table`] looks up at once.
const FAST_BITS: u32 = 10;

impl Code {
    /// The code for symbols counted `frequencies` (`contexts` times
    /// `values * classes` of them, a context after the other): Huffman
    /// lengths, limited to [`MAX_CODE_BITS`].
    pub fn from_frequencies(frequencies: &[u64], classes: u32, contexts: u32) -> Code {
        let per = frequencies.len() / contexts as usize;
        let lengths = frequencies.chunks(per).flat_map(huffman_lengths).collect();
        Code::from_lengths(lengths, classes, contexts).expect("built lengths are a code")
    }

    /// The code with these lengths (as stored in a file).
    ///
    /// # Errors
    /// Lengths that are no prefix code (too many codes of a length), or
    /// longer than [`MAX_CODE_BITS`].
    pub fn from_lengths(lengths: Vec<u8>, classes: u32, contexts: u32) -> Result<Code, BadBlock> {
        let per = lengths.len() / contexts.max(1) as usize;
        if contexts == 0 || per * contexts as usize != lengths.len() {
            return Err(BadBlock(
                "code lengths that do not fill the contexts".into(),
            ));
        }
        let tables = lengths
            .chunks(per.max(1))
            .map(|chunk| Table::from_lengths(chunk.to_vec()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Code {
            classes,
            tables,
            lengths,
        })
    }

    /// Bytes of blocks whose symbols were counted `frequencies` (as for
    /// [`Code::from_frequencies`]): each symbol's code and extra bits, and
    /// half a byte a block for its last byte.
    pub fn data_bytes(&self, frequencies: &[u64], blocks: u64) -> u64 {
        let per = self.lengths.len() / self.tables.len();
        let bits: u64 = frequencies
            .iter()
            .zip(&self.lengths)
            .enumerate()
            .map(|(i, (&n, &length))| {
                n * (u64::from(length) + (i % per) as u64 % u64::from(self.classes))
            })
            .sum();
        bits / 8 + blocks / 2
    }

    /// Each symbol's length in bits (what a file stores).
    pub fn lengths(&self) -> &[u8] {
        &self.lengths
    }

    fn contexts(&self) -> u32 {
        self.tables.len() as u32
    }

    /// Appends the runs of one block to `out`, byte-aligned at its start.
    ///
    /// # Panics
    /// A run whose symbol has no code (one not counted when the code was
    /// built).
    pub fn encode_block(&self, block: &[(u16, u64)], out: &mut Vec<u8>) {
        let mut writer = BitWriter::new(out);
        let mut before = None;
        for &(value, length) in block {
            let table = &self.tables[context_of(before, self.contexts())];
            let (symbol, extra, class) = symbol_of(value, length, self.classes);
            let bits = u32::from(table.lengths[symbol as usize]);
            assert!(bits > 0, "symbol {symbol} was not counted");
            writer.put(u64::from(table.codes[symbol as usize]), bits);
            writer.put(extra, class);
            before = Some(value);
        }
        writer.finish();
    }

    /// The value of slot `target` of the block `bytes` of `slots` slots.
    ///
    /// # Errors
    /// Bytes that are no block of this code.
    pub fn value_at(&self, bytes: &[u8], slots: u64, target: u64) -> Result<u16, BadBlock> {
        let mut reader = BitReader::new(bytes);
        let mut at = 0u64;
        let mut before = None;
        loop {
            let (value, length) = self.next_run(&mut reader, before)?;
            at += length;
            if at > slots {
                return Err(BadBlock(format!("runs beyond the block's {slots} slots")));
            }
            if at > target {
                return Ok(value);
            }
            before = Some(value);
        }
    }

    /// Every run of the block `bytes` of `slots` slots, in order.
    ///
    /// # Errors
    /// Bytes that are no block of this code, or runs that do not add up
    /// to `slots`.
    pub fn decode_block(
        &self,
        bytes: &[u8],
        slots: u64,
        mut visit: impl FnMut(u16, u64),
    ) -> Result<(), BadBlock> {
        let mut reader = BitReader::new(bytes);
        let mut at = 0u64;
        let mut before = None;
        while at < slots {
            let (value, length) = self.next_run(&mut reader, before)?;
            at += length;
            if at > slots {
                return Err(BadBlock(format!("runs beyond the block's {slots} slots")));
            }
            visit(value, length);
            before = Some(value);
        }
        Ok(())
    }

    fn next_run(
        &self,
        reader: &mut BitReader,
        before: Option<u16>,
    ) -> Result<(u16, u64), BadBlock> {
        let context = context_of(before, self.contexts());
        let table = self
            .tables
            .get(context)
            .ok_or_else(|| BadBlock(format!("a run after one of value {before:?}")))?;
        let symbol = table.decode_symbol(reader)?;
        let class = symbol % self.classes;
        let value = symbol / self.classes;
        let extra = reader.take(class)?;
        Ok((value as u16, (1u64 << class) + extra))
    }
}

impl Table {
    fn from_lengths(lengths: Vec<u8>) -> Result<Table, BadBlock> {
        let mut count = [0u32; MAX_CODE_BITS as usize + 2];
        for &length in &lengths {
            if u32::from(length) > MAX_CODE_BITS {
                return Err(BadBlock(format!("a code of {length} bits")));
            }
            count[usize::from(length)] += 1;
        }
        count[0] = 0;
        // Kraft: the codes of each length must fit in what is left.
        let mut left = 1u64;
        for &n in &count[1..=MAX_CODE_BITS as usize] {
            left *= 2;
            if u64::from(n) > left {
                return Err(BadBlock("code lengths that are no prefix code".into()));
            }
            left -= u64::from(n);
        }
        let mut first = [0u32; MAX_CODE_BITS as usize + 2];
        let mut start = [0u32; MAX_CODE_BITS as usize + 2];
        let mut code = 0u32;
        let mut index = 0u32;
        for length in 1..=MAX_CODE_BITS as usize {
            first[length] = code;
            start[length] = index;
            code = (code + count[length]) << 1;
            index += count[length];
        }
        let mut sorted: Vec<u32> = (0..lengths.len() as u32)
            .filter(|&s| lengths[s as usize] > 0)
            .collect();
        sorted.sort_by_key(|&s| (lengths[s as usize], s));
        let mut codes = vec![0u32; lengths.len()];
        let mut next = first;
        for &s in &sorted {
            let length = usize::from(lengths[s as usize]);
            codes[s as usize] = next[length];
            next[length] += 1;
        }
        let mut fast = vec![0u32; 1 << FAST_BITS];
        for (symbol, &length) in lengths.iter().enumerate() {
            let length = u32::from(length);
            if length == 0 || length > FAST_BITS {
                continue;
            }
            let spare = FAST_BITS - length;
            let first = (codes[symbol] << spare) as usize;
            for entry in &mut fast[first..first + (1 << spare)] {
                *entry = (symbol as u32) << 5 | length;
            }
        }
        Ok(Table {
            lengths,
            codes,
            first,
            count,
            start,
            sorted,
            fast,
        })
    }

    fn decode_symbol(&self, reader: &mut BitReader) -> Result<u32, BadBlock> {
        let (bits, available) = reader.peek(FAST_BITS);
        let entry = self.fast[bits as usize];
        let length = entry & 31;
        if entry != 0 && length <= available {
            reader.skip(length);
            return Ok(entry >> 5);
        }
        let mut code = 0u32;
        for length in 1..=MAX_CODE_BITS as usize {
            code = code << 1 | reader.take(1)? as u32;
            let offset = code.wrapping_sub(self.first[length]);
            if offset < self.count[length] {
                return Ok(self.sorted[(self.start[length] + offset) as usize]);
            }
        }
        Err(BadBlock("a code that the file's code does not have".into()))
    }
}

/// Huffman code lengths of `frequencies` (0 for a symbol never used; a
/// lone symbol gets one bit), no longer than [`MAX_CODE_BITS`]: where the
/// tree is deeper, the frequencies are halved (keeping every used one at
/// least 1) and the tree built again.
fn huffman_lengths(frequencies: &[u64]) -> Vec<u8> {
    let mut weights: Vec<u64> = frequencies.to_vec();
    loop {
        let lengths = tree_depths(&weights);
        if lengths.iter().all(|&l| u32::from(l) <= MAX_CODE_BITS) {
            return lengths;
        }
        for w in &mut weights {
            if *w > 0 {
                *w = (*w / 2).max(1);
            }
        }
    }
}

/// The depth of each used symbol in a Huffman tree of `weights`.
fn tree_depths(weights: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut lengths = vec![0u8; weights.len()];
    let used: Vec<usize> = (0..weights.len()).filter(|&s| weights[s] > 0).collect();
    match used.len() {
        0 => return lengths,
        1 => {
            lengths[used[0]] = 1;
            return lengths;
        }
        _ => {}
    }
    // Nodes: the leaves first, then the inner nodes as they are made;
    // `parent[n]` links them up.
    let mut parent: Vec<usize> = vec![usize::MAX; used.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = used
        .iter()
        .enumerate()
        .map(|(node, &s)| Reverse((weights[s], node)))
        .collect();
    while heap.len() > 1 {
        let Reverse((a, x)) = heap.pop().expect("two nodes");
        let Reverse((b, y)) = heap.pop().expect("two nodes");
        let node = parent.len();
        parent.push(usize::MAX);
        parent[x] = node;
        parent[y] = node;
        heap.push(Reverse((a + b, node)));
    }
    // Depths from the root down: a parent is always made after its
    // children, so walking the nodes backwards meets parents first.
    let mut depth = vec![0u32; parent.len()];
    for node in (0..parent.len()).rev() {
        if parent[node] != usize::MAX {
            depth[node] = depth[parent[node]] + 1;
        }
    }
    for (leaf, &s) in used.iter().enumerate() {
        lengths[s] = depth[leaf].min(255) as u8;
    }
    lengths
}

/// Counts the symbols of `block`'s runs into `frequencies` (`contexts`
/// times the symbols of a context, a context after the other).
pub fn count_symbols(block: &[(u16, u64)], classes: u32, contexts: u32, frequencies: &mut [u64]) {
    let per = frequencies.len() / contexts as usize;
    let mut before = None;
    for &(value, length) in block {
        let context = context_of(before, contexts);
        frequencies[context * per + symbol_of(value, length, classes).0 as usize] += 1;
        before = Some(value);
    }
}

/// Bits written most significant first.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    buffer: u64,
    bits: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter {
            out,
            buffer: 0,
            bits: 0,
        }
    }

    /// Writes the low `bits` bits of `value` (at most 32 at a time is
    /// enough: codes are 24 bits, extras fewer than 32).
    fn put(&mut self, value: u64, bits: u32) {
        debug_assert!(bits <= 32);
        if bits == 0 {
            return;
        }
        self.buffer = self.buffer << bits | (value & ((1 << bits) - 1));
        self.bits += bits;
        while self.bits >= 8 {
            self.bits -= 8;
            self.out.push((self.buffer >> self.bits) as u8);
        }
    }

    fn finish(self) {
        if self.bits > 0 {
            self.out.push((self.buffer << (8 - self.bits)) as u8);
        }
    }
}

/// Bits read most significant first; reading past the end is an error.
struct BitReader<'a> {
    bytes: &'a [u8],
    next: usize,
    buffer: u64,
    bits: u32,
}

impl<'a> BitReader<'a> {
    fn new(bytes: &'a [u8]) -> BitReader<'a> {
        BitReader {
            bytes,
            next: 0,
            buffer: 0,
            bits: 0,
        }
    }

    /// The next `bits` bits (at most 32), without taking them, padded
    /// with zeros beyond the block's end, and how many of them are the
    /// block's.
    fn peek(&mut self, bits: u32) -> (u64, u32) {
        while self.bits < bits {
            let Some(&byte) = self.bytes.get(self.next) else {
                let padded = (self.buffer << (bits - self.bits)) & ((1 << bits) - 1);
                return (padded, self.bits);
            };
            self.next += 1;
            self.buffer = self.buffer << 8 | u64::from(byte);
            self.bits += 8;
        }
        (
            (self.buffer >> (self.bits - bits)) & ((1 << bits) - 1),
            bits,
        )
    }

    /// Drops `bits` bits that [`BitReader::peek`] has shown.
    fn skip(&mut self, bits: u32) {
        self.bits -= bits;
    }

    /// The next `bits` bits (at most 32) as a number.
    fn take(&mut self, bits: u32) -> Result<u64, BadBlock> {
        if bits == 0 {
            return Ok(0);
        }
        while self.bits < bits {
            let Some(&byte) = self.bytes.get(self.next) else {
                return Err(BadBlock("the block ends in the middle of a run".into()));
            };
            self.next += 1;
            self.buffer = self.buffer << 8 | u64::from(byte);
            self.bits += 8;
        }
        self.bits -= bits;
        Ok((self.buffer >> self.bits) & ((1 << bits) - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks_of(values: &[Option<u16>], block_slots: usize) -> Vec<Vec<(u16, u64)>> {
        values
            .chunks(block_slots)
            .map(|chunk| {
                let mut block = Vec::new();
                runs(chunk.iter().copied(), |v, n| block.push((v, n)));
                block
            })
            .collect()
    }

    #[test]
    fn runs_absorb_dont_cares() {
        let mut out = Vec::new();
        let values = [None, Some(2), None, Some(2), Some(1), None, None];
        runs(values.into_iter(), |v, n| out.push((v, n)));
        assert_eq!(out, [(2, 4), (1, 3)]);
        out.clear();
        runs([None, None].into_iter(), |v, n| out.push((v, n)));
        assert_eq!(out, [(0, 2)]);
    }

    #[test]
    fn blocks_round_trip_value_by_value() {
        // A pseudo-random mix of long and short runs over three values and
        // a few distances, with don't-cares.
        let mut state = 12345u64;
        let mut values = Vec::new();
        while values.len() < 50_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let value = ((state >> 33) % 7) as u16;
            let length = 1 + (state >> 40) % if state.is_multiple_of(3) { 2000 } else { 5 };
            for _ in 0..length {
                values.push(if (state >> 20).is_multiple_of(11) {
                    None
                } else {
                    Some(value)
                });
            }
        }
        for (block_slots, contexts) in [(64usize, 1), (4096, 8), (1 << 16, 1), (1 << 16, 8)] {
            let classes = classes(block_slots as u64);
            let blocks = blocks_of(&values, block_slots);
            let mut frequencies = vec![0u64; contexts * 7 * classes as usize];
            for block in &blocks {
                count_symbols(block, classes, contexts as u32, &mut frequencies);
            }
            let code = Code::from_frequencies(&frequencies, classes, contexts as u32);
            let code =
                Code::from_lengths(code.lengths().to_vec(), classes, contexts as u32).unwrap();
            let mut encoded = Vec::new();
            for block in &blocks {
                let mut bytes = Vec::new();
                code.encode_block(block, &mut bytes);
                encoded.push(bytes);
            }
            for (b, chunk) in values.chunks(block_slots).enumerate() {
                let mut decoded = Vec::new();
                code.decode_block(&encoded[b], chunk.len() as u64, |v, n| {
                    decoded.extend(std::iter::repeat_n(v, n as usize))
                })
                .unwrap();
                for (i, value) in chunk.iter().enumerate() {
                    if let Some(v) = value {
                        assert_eq!(decoded[i], *v);
                        let probed = code.value_at(&encoded[b], chunk.len() as u64, i as u64);
                        assert_eq!(probed, Ok(*v));
                    }
                }
            }
        }
    }

    #[test]
    fn damaged_blocks_are_errors_not_panics() {
        let block = vec![(1u16, 100u64), (0, 28)];
        let mut frequencies = vec![0u64; 4 * 3 * classes(128) as usize];
        count_symbols(&block, classes(128), 4, &mut frequencies);
        let code = Code::from_frequencies(&frequencies, classes(128), 4);
        let mut bytes = Vec::new();
        code.encode_block(&block, &mut bytes);
        assert!(code.value_at(&bytes[..1], 128, 127).is_err());
        assert!(code.decode_block(&bytes, 64, |_, _| {}).is_err());
        for b in 0..=255u8 {
            let _ = code.value_at(&[b, b, b], 128, 127);
            let _ = code.decode_block(&[b; 9], 128, |_, _| {});
        }
        assert!(Code::from_lengths(vec![1, 1, 1], 1, 1).is_err());
        assert!(Code::from_lengths(vec![30], 1, 1).is_err());
        assert!(Code::from_lengths(vec![1, 1, 1], 1, 2).is_err());
        // A run after a value the contexts do not reach.
        let code = Code::from_lengths(vec![1, 1, 1, 1], 1, 2).unwrap();
        assert!(code.decode_block(&[0xFF], 8, |_, _| {}).is_err());
    }

    #[test]
    fn skewed_frequencies_keep_codes_short() {
        let frequencies: Vec<u64> = (0..60).map(|i| 1u64 << i.min(60)).collect();
        let code = Code::from_frequencies(&frequencies, 1, 1);
        assert!(code.lengths().iter().all(|&l| (1..=24).contains(&l)));
    }
}

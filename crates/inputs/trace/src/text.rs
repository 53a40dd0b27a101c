//! Text (`.traceg`) parser and writer.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::block::{BlockParser, RawBlock};
use crate::error::{Result, TraceError};
use crate::header::{Dialect, KernelHeader};
use crate::record::{flags, AddrMode, OpcodeTable, ThreadBlockTrace, TraceInstr, WarpTrace};

/// Longest text-trace line read (the longest real lines, 32 addresses of a memory
/// instruction, are under 1 KB): bounds memory on a file without line breaks.
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// Streaming parser of a text kernel trace.
pub(crate) struct TextParser {
    path: PathBuf,
    rd: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    lineno: u64,
    /// `buf` holds a line that has not been consumed yet.
    pending: bool,
    dialect: Dialect,
}

pub(crate) fn trim_ascii(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

pub(crate) fn lossy(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 80 {
        format!("{}…", &s[..s.char_indices().nth(80).map_or(s.len(), |c| c.0)])
    } else {
        s.into_owned()
    }
}

impl TextParser {
    /// Read the header; the parser is then positioned before the first block.
    pub(crate) fn open(path: &Path, rd: Box<dyn BufRead + Send>) -> Result<(TextParser, KernelHeader)> {
        let mut p = TextParser {
            path: path.to_path_buf(),
            rd,
            buf: Vec::with_capacity(512),
            lineno: 0,
            pending: false,
            dialect: KernelHeader::default().dialect(),
        };
        let mut h = KernelHeader::default();
        while p.read_line()? {
            let line = trim_ascii(&p.buf);
            if line.starts_with(b"#") {
                if line.starts_with(b"#traces format") {
                    let s = String::from_utf8_lossy(line).into_owned();
                    h.raw.push_str(&s);
                    h.raw.push('\n');
                    h.format_line = s;
                } else {
                    p.pending = true;
                }
                break;
            }
            let s = std::str::from_utf8(&p.buf).map_err(|_| TraceError::Parse {
                path: p.path.clone(),
                line: p.lineno,
                field: "header",
                msg: "header line is not valid UTF-8".into(),
            })?;
            let s = s.trim_end_matches(['\r', '\n']).to_string();
            h.parse_line(&p.path, p.lineno, &s)?;
        }
        h.finish(&p.path, p.lineno)?;
        p.dialect = h.dialect();
        Ok((p, h))
    }

    /// Read the next line into `buf` (without the line terminator). Returns
    /// false at end of file.
    fn read_line(&mut self) -> Result<bool> {
        if self.pending {
            self.pending = false;
            return Ok(true);
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let r = self.append_line(&mut buf);
        self.buf = buf;
        r
    }

    /// Append the next line to `buf` (without the line terminator). Returns false at end
    /// of file (`buf` unchanged). Does not see a `pending` line.
    fn append_line(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        let start = buf.len();
        // Up to and including the next `\n`, at most `MAX_LINE_BYTES` bytes.
        loop {
            let avail = match self.rd.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TraceError::io(&self.path, self.lineno, e)),
            };
            if avail.is_empty() {
                break;
            }
            let room = (MAX_LINE_BYTES as usize - (buf.len() - start)).min(avail.len());
            let (take, done) = match memchr::memchr(b'\n', &avail[..room]) {
                Some(i) => (i + 1, true),
                None => (room, buf.len() - start + room == MAX_LINE_BYTES as usize),
            };
            buf.extend_from_slice(&avail[..take]);
            self.rd.consume(take);
            if done {
                break;
            }
        }
        let n = buf.len() - start;
        if n == 0 {
            return Ok(false);
        }
        self.lineno += 1;
        if n as u64 == MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            return Err(self.perr(
                "line",
                format!("longer than {MAX_LINE_BYTES} bytes (not a trace line; a binary or endless file?)"),
            ));
        }
        while buf.len() > start && matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        Ok(true)
    }

    fn perr(&self, field: &'static str, msg: String) -> TraceError {
        TraceError::Parse {
            path: self.path.clone(),
            line: self.lineno,
            field,
            msg,
        }
    }

    fn trunc(&self, field: &'static str, msg: String) -> TraceError {
        TraceError::Truncated {
            path: self.path.clone(),
            line: self.lineno,
            field,
            msg,
        }
    }

    /// The current line (1-based; the last line read).
    pub(crate) fn line(&self) -> u64 {
        self.lineno
    }

    /// Parse the next `#BEGIN_TB … #END_TB` section.
    pub(crate) fn next_block(&mut self, ops: &mut OpcodeTable) -> Result<Option<ThreadBlockTrace>> {
        let Some(mut raw) = self.next_raw()? else {
            return Ok(None);
        };
        Ok(Some(self.block_parser().parse_with(&mut raw, ops)?.tb))
    }

    /// What parses this trace's blocks.
    pub(crate) fn block_parser(&self) -> BlockParser {
        BlockParser {
            path: self.path.clone(),
            dialect: self.dialect,
        }
    }

    /// The lines of the next `#BEGIN_TB … #END_TB` section, not parsed (`None` at the end
    /// of the file). An error before `#BEGIN_TB` is returned; one inside the block ends
    /// the block (it is reported after the block's lines are parsed).
    pub(crate) fn next_raw(&mut self) -> Result<Option<RawBlock>> {
        // Find #BEGIN_TB.
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            let l = trim_ascii(&self.buf);
            if l.is_empty() {
                continue;
            }
            if l.starts_with(b"#BEGIN_TB") {
                break;
            }
            if l.starts_with(b"#END_TB") {
                return Err(self.perr("#END_TB", "`#END_TB` without `#BEGIN_TB`".into()));
            }
            if l.starts_with(b"#") {
                continue; // other comment
            }
            return Err(self.perr("#BEGIN_TB", format!("expected `#BEGIN_TB`, got `{}`", lossy(l))));
        }
        let begin_line = self.lineno;
        let mut raw = RawBlock::new(begin_line);
        loop {
            // The complete lines in the reader's buffer, in one go: they are copied as they
            // are (each ends in `\n`; the parser splits them), up to the line that ends the
            // block. Only a line that starts with `#` (after blanks) can end it, and
            // instruction lines have none, so the search is for `#`.
            let avail = match self.rd.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    raw.fail(TraceError::io(&self.path, self.lineno, e));
                    return Ok(Some(raw));
                }
            };
            if let Some(last) = memchr::memrchr(b'\n', avail) {
                let lines = &avail[..=last];
                let end = block_end(lines);
                let body = &lines[..end.map_or(lines.len(), |(start, _, _)| start)];
                raw.text.extend_from_slice(body);
                self.lineno += memchr::memchr_iter(b'\n', body).count() as u64;
                let used = end.map_or(lines.len(), |(_, next, _)| next);
                self.rd.consume(used);
                let Some((_, _, ends)) = end else {
                    continue;
                };
                self.lineno += 1;
                if ends {
                    raw.end_at(self.lineno);
                } else {
                    raw.fail(self.perr(
                        "#BEGIN_TB",
                        format!("nested `#BEGIN_TB` (block begins at line {begin_line}; `#END_TB` missing)"),
                    ));
                }
                return Ok(Some(raw));
            }
            // A line that does not end in the buffer (or the last line, without `\n`).
            let start = raw.text.len();
            match self.append_line(&mut raw.text) {
                Ok(true) => {}
                Ok(false) => {
                    raw.fail(self.trunc(
                        "#END_TB",
                        format!("end of file inside the thread block that begins at line {begin_line}"),
                    ));
                    return Ok(Some(raw));
                }
                Err(e) => {
                    raw.text.truncate(start);
                    raw.fail(e);
                    return Ok(Some(raw));
                }
            }
            let l = trim_ascii(&raw.text[start..]);
            if l.first() == Some(&b'#') {
                if l.starts_with(b"#END_TB") {
                    raw.text.truncate(start);
                    raw.end_at(self.lineno);
                    return Ok(Some(raw));
                }
                if l.starts_with(b"#BEGIN_TB") {
                    raw.text.truncate(start);
                    raw.fail(self.perr(
                        "#BEGIN_TB",
                        format!("nested `#BEGIN_TB` (block begins at line {begin_line}; `#END_TB` missing)"),
                    ));
                    return Ok(Some(raw));
                }
            }
            raw.text.push(b'\n');
        }
    }
}

/// In `lines` (complete lines, each ending in `\n`), the first line that ends a block
/// (`#END_TB`, or a nested `#BEGIN_TB`, after any blanks): (its first byte, the byte after
/// its `\n`, whether it is `#END_TB`).
fn block_end(lines: &[u8]) -> Option<(usize, usize, bool)> {
    // `from` is always a line's first byte: after a `#` the search goes on at the next line,
    // so each byte is looked at a bounded number of times.
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'#', &lines[from..]) {
        let at = from + i;
        let start = memchr::memrchr(b'\n', &lines[from..at]).map_or(from, |n| from + n + 1);
        let next = memchr::memchr(b'\n', &lines[at..]).map_or(lines.len(), |n| at + n + 1);
        from = next;
        if !lines[start..at].iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let l = &lines[at..next];
        if l.starts_with(b"#END_TB") {
            return Some((start, next, true));
        }
        if l.starts_with(b"#BEGIN_TB") {
            return Some((start, next, false));
        }
    }
    None
}

// ---------------------------------------------------------------- writer

/// Writes a text trace in the dialect given by its header.
pub struct TextWriter<W: Write> {
    out: W,
    dialect: Dialect,
    path: PathBuf,
}

impl<W: Write> TextWriter<W> {
    /// Write `header` (its raw text, or a synthesized one) and prepare to
    /// write blocks. `path` is used in error messages only.
    pub fn new(mut out: W, header: &KernelHeader, path: &Path) -> Result<Self> {
        let io = |e| TraceError::io(path, 0, e);
        out.write_all(header.text().as_bytes()).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
        Ok(TextWriter {
            out,
            dialect: header.dialect(),
            path: path.to_path_buf(),
        })
    }

    /// Append one thread block.
    pub fn write_block(&mut self, tb: &ThreadBlockTrace, ops: &OpcodeTable) -> Result<()> {
        let mut s = String::with_capacity(4096);
        use std::fmt::Write as _;
        let b = tb.block;
        let _ = write!(s, "\n#BEGIN_TB\n\nthread block = {},{},{}\n", b[0], b[1], b[2]);
        if let Some(c) = &tb.cluster {
            let _ = writeln!(s, "cluster id = {},{},{}", c.id[0], c.id[1], c.id[2]);
            let _ = writeln!(s, "cluster cta = {},{},{}", c.cta[0], c.cta[1], c.cta[2]);
            let _ = writeln!(s, "cluster rank = {}", c.rank);
        }
        for w in &tb.warps {
            let _ = write!(s, "\nwarp = {}\ninsts = {}\n", w.warp_id, w.instrs.len());
            for ins in &w.instrs {
                self.fmt_instr(&mut s, tb, w, ins, ops)?;
                if s.len() > 1 << 16 {
                    self.flush_str(&mut s)?;
                }
            }
        }
        s.push_str("#END_TB\n");
        self.flush_str(&mut s)
    }

    fn flush_str(&mut self, s: &mut String) -> Result<()> {
        self.out
            .write_all(s.as_bytes())
            .map_err(|e| TraceError::io(&self.path, 0, e))?;
        s.clear();
        Ok(())
    }

    fn fmt_instr(
        &self,
        s: &mut String,
        tb: &ThreadBlockTrace,
        w: &WarpTrace,
        ins: &TraceInstr,
        ops: &OpcodeTable,
    ) -> Result<()> {
        use std::fmt::Write as _;
        let d = self.dialect;
        if d.block_prefix {
            let _ = write!(
                s,
                "{} {} {} {} ",
                tb.block[0], tb.block[1], tb.block[2], w.warp_id
            );
        }
        if d.lineinfo {
            let _ = write!(s, "{} ", ins.line);
        }
        let _ = write!(s, "{:04x} {:08x} {} ", ins.pc, ins.mask, ins.n_dst);
        for r in ins.dsts() {
            let _ = write!(s, "{r} ");
        }
        let name = ops.name(ins.opcode);
        if name.is_empty() {
            return Err(TraceError::Encode {
                path: self.path.clone(),
                msg: format!("opcode id {} not in the table", ins.opcode.0),
            });
        }
        let _ = write!(s, "{name} {} ", ins.n_src);
        for r in ins.srcs() {
            let _ = write!(s, "{r} ");
        }
        if ins.flags & flags::HAS_GMMA_FIELD != 0 {
            let _ = write!(s, "{} ", u8::from(ins.flags & flags::GMMA_COMMIT != 0));
        }
        let _ = write!(s, "{} ", ins.mem_width);
        if ins.is_mem() {
            let a = w.addrs_of(ins);
            let _ = write!(s, "{} ", ins.addr_mode as u8);
            match ins.addr_mode {
                AddrMode::ListAll => {
                    for x in a {
                        let _ = write!(s, "0x{x:016x} ");
                    }
                }
                AddrMode::BaseStride => {
                    let base = a.first().copied().unwrap_or(0);
                    let stride = if a.len() >= 2 {
                        a[1].wrapping_sub(a[0]) as i64
                    } else {
                        0
                    };
                    let _ = write!(s, "0x{base:x} {stride} ");
                }
                AddrMode::BaseDelta => {
                    let base = a.first().copied().unwrap_or(0);
                    let _ = write!(s, "0x{base:x} ");
                    for p in a.windows(2) {
                        let _ = write!(s, "{} ", p[1].wrapping_sub(p[0]) as i64);
                    }
                }
            }
        }
        for i in 0..usize::from(d.immediates) {
            let _ = write!(s, "{} ", ins.imm[i]);
        }
        if d.values {
            if ins.has_values() {
                s.push_str("Val ");
                for vals in w.values_of(ins) {
                    let _ = write!(s, "{} ", vals.len());
                    for v in vals {
                        let _ = write!(s, "{v:x} ");
                    }
                }
            } else {
                s.push_str("NoVal ");
            }
        }
        s.pop();
        s.push('\n');
        Ok(())
    }

    /// Flush and return the inner writer.
    pub fn finish(mut self) -> Result<W> {
        self.out.flush().map_err(|e| TraceError::io(&self.path, 0, e))?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `block_end` finds what reading line by line finds: the first line that, without its
    /// blanks, starts with `#END_TB` or `#BEGIN_TB` (comments, `#` inside a line, blanks
    /// and `\r` before it do not end a block).
    #[test]
    fn block_end_is_the_first_marker_line() {
        let pieces: [&[u8]; 10] = [
            b"0 0 0 0 0010 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0\n",
            b"# a comment\n",
            b"  \t#END_TB\n",
            b"#BEGIN_TB\r\n",
            b"warp = 3\n",
            b"\n",
            b"x #END_TB\n",
            b" # #END_TB\n",
            b"#END_TB\n",
            b"##########\n",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2_000 {
            let mut text = Vec::new();
            for _ in 0..(x % 7) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.extend_from_slice(pieces[(x % 10) as usize]);
            }
            // Line by line.
            let mut want = None;
            let mut start = 0;
            for line in text.split_inclusive(|&b| b == b'\n') {
                let l = trim_ascii(line);
                if l.starts_with(b"#END_TB") || l.starts_with(b"#BEGIN_TB") {
                    want = Some((start, start + line.len(), l.starts_with(b"#END_TB")));
                    break;
                }
                start += line.len();
            }
            assert_eq!(block_end(&text), want, "{:?}", lossy(&text));
            x = x.wrapping_add(1);
        }
        // A long line of `#`s (the search goes on at the next line after its first `#`).
        let mut long = vec![b'#'; 1 << 16];
        long.push(b'\n');
        long.extend_from_slice(b"#END_TB\n");
        assert_eq!(block_end(&long), Some((long.len() - 8, long.len(), true)));
    }

    #[test]
    fn opcodes_interned_by_bytes_keep_their_ids() {
        let mut t = OpcodeTable::new();
        let names = [
            "IMAD.MOV.U32",
            "LDG.E",
            "IMAD.WIDE",
            "EXIT",
            "LDG.E.64",
            "S2R",
            "IMAD.MOV.U32",
        ];
        let ids: Vec<_> = names
            .iter()
            .map(|n| t.intern_bytes(n.as_bytes()).unwrap().unwrap())
            .collect();
        for (n, id) in names.iter().zip(&ids) {
            assert_eq!(t.get(n), Some(*id));
            assert_eq!(t.intern_bytes(n.as_bytes()).unwrap(), Some(*id));
        }
        assert!(t.intern_bytes(&[0xff, 0x41]).is_err());
    }
}

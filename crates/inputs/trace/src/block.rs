//! Thread blocks of a text trace read in two steps: [`RawBlock`], the lines of one
//! `#BEGIN_TB … #END_TB` section as read (cheap, in file order), then
//! [`BlockParser::parse`], which needs nothing else and may run on another thread. The
//! serial reader ([`crate::KernelTraceReader::next_block`]) goes through the same two
//! steps, so both ways give the same records and the same errors (file and line).

use std::path::{Path, PathBuf};

use crate::error::{Result, TraceError};
use crate::header::Dialect;
use crate::line::parse_instr;
use crate::record::{ClusterInfo, OpcodeId, OpcodeTable, ThreadBlockTrace, WarpTrace};
use crate::scan::parse_u64;
use crate::text::{lossy, trim_ascii};

/// One thread block's lines, read but not parsed.
#[derive(Debug, Default)]
pub struct RawBlock {
    /// The lines after `#BEGIN_TB`, as read, each ending in `\n`.
    pub(crate) text: Vec<u8>,
    /// Line number of the `#BEGIN_TB` line (the first line of `text` follows it).
    begin_line: u64,
    /// Line number of the `#END_TB` line, or the error that ended the block before it
    /// (end of file, a nested `#BEGIN_TB`, a read error): it is reported after the errors
    /// of the lines before it, as a reader that parses line by line would.
    end: Option<std::result::Result<u64, TraceError>>,
}

impl RawBlock {
    pub(crate) fn new(begin_line: u64) -> RawBlock {
        RawBlock {
            begin_line,
            ..RawBlock::default()
        }
    }

    pub(crate) fn end_at(&mut self, line: u64) {
        self.end = Some(Ok(line));
    }

    pub(crate) fn fail(&mut self, e: TraceError) {
        self.end = Some(Err(e));
    }

    /// Whether an error ended the block before its `#END_TB`.
    pub(crate) fn ends_early(&self) -> bool {
        matches!(self.end, Some(Err(_)))
    }

    /// Bytes of text held.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// A parsed thread block whose opcode ids are those of its own table (see
/// [`crate::KernelTraceReader::accept`]).
#[derive(Debug)]
pub struct ParsedBlock {
    pub(crate) tb: ThreadBlockTrace,
    /// `None`: the ids are already the reader's.
    pub(crate) ops: Option<OpcodeTable>,
    /// Line of the block's `#END_TB`.
    pub(crate) end_line: u64,
}

/// Parses [`RawBlock`]s of one trace (any thread; `Sync`).
#[derive(Clone, Debug)]
pub struct BlockParser {
    pub(crate) path: PathBuf,
    pub(crate) dialect: Dialect,
}

/// Where the parse is, for error messages.
struct At<'a> {
    path: &'a PathBuf,
    line: u64,
}

impl At<'_> {
    fn perr(&self, field: &'static str, msg: String) -> TraceError {
        TraceError::Parse {
            path: self.path.clone(),
            line: self.line,
            field,
            msg,
        }
    }

    fn trunc(&self, field: &'static str, msg: String) -> TraceError {
        TraceError::Truncated {
            path: self.path.clone(),
            line: self.line,
            field,
            msg,
        }
    }

    fn dec_u64(&self, v: &[u8], field: &'static str) -> Result<u64> {
        parse_u64(v).ok_or_else(|| self.perr(field, format!("bad decimal number `{}`", lossy(v))))
    }

    fn dim3(&self, v: &[u8], field: &'static str) -> Result<[u32; 3]> {
        let mut out = [0u32; 3];
        let mut it = v.split(|&c| c == b',');
        for o in out.iter_mut() {
            let t = it
                .next()
                .ok_or_else(|| self.perr(field, format!("expected `x,y,z`, got `{}`", lossy(v))))?;
            let n = self.dec_u64(trim_ascii(t), field)?;
            *o = u32::try_from(n).map_err(|_| self.perr(field, "out of range".into()))?;
        }
        if it.next().is_some() {
            return Err(self.perr(field, format!("expected `x,y,z`, got `{}`", lossy(v))));
        }
        Ok(out)
    }

    fn finish_warp(&self, tb: &mut ThreadBlockTrace, (w, exp): (WarpTrace, Option<u64>)) -> Result<()> {
        if let Some(n) = exp {
            if (w.instrs.len() as u64) < n {
                return Err(self.trunc(
                    "insts",
                    format!(
                        "warp {} has {} instruction lines, its `insts` header says {n}",
                        w.warp_id,
                        w.instrs.len()
                    ),
                ));
            }
        }
        tb.warps.push(w);
        Ok(())
    }
}

/// `key = value` → value, when the line's key is `key`.
pub(crate) fn strip_key<'a>(l: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let rest = l.strip_prefix(key)?;
    let rest = trim_ascii(rest);
    let rest = rest.strip_prefix(b"=")?;
    Some(trim_ascii(rest))
}

impl BlockParser {
    /// Parse `raw` with an opcode table of its own (for [`crate::KernelTraceReader::accept`]).
    /// The error that ended the block early, if any, is taken out of `raw`.
    pub fn parse(&self, raw: &mut RawBlock) -> Result<ParsedBlock> {
        let mut ops = OpcodeTable::new();
        let mut p = self.parse_with(raw, &mut ops)?;
        p.ops = Some(ops);
        Ok(p)
    }

    /// Parse `raw`, interning opcodes in `ops`.
    pub(crate) fn parse_with(&self, raw: &mut RawBlock, ops: &mut OpcodeTable) -> Result<ParsedBlock> {
        let mut at = At {
            path: &self.path,
            line: raw.begin_line,
        };
        let mut tb = ThreadBlockTrace::default();
        let mut have_tb = false;
        let mut cur: Option<(WarpTrace, Option<u64>)> = None;
        let mut from = 0;
        for nl in memchr::memchr_iter(b'\n', &raw.text) {
            // The line without its `\n` and any `\r` before it.
            let mut line = &raw.text[from..nl];
            from = nl + 1;
            while let [rest @ .., b'\r'] = line {
                line = rest;
            }
            let l = trim_ascii(line);
            at.line += 1;
            if at.line.is_multiple_of(crate::interleave::LINES) {
                crate::interleave::point();
            }
            if l.is_empty() {
                continue;
            }
            // An instruction line starts with a digit (its PC, line number or block
            // index); no other line of a block does.
            if !l[0].is_ascii_digit() {
                if l.starts_with(b"#") {
                    continue;
                }
                if let Some(v) = strip_key(l, b"thread block") {
                    tb.block = at.dim3(v, "thread block")?;
                    have_tb = true;
                    continue;
                }
                if let Some(v) = strip_key(l, b"cluster id") {
                    tb.cluster.get_or_insert_with(ClusterInfo::default).id = at.dim3(v, "cluster id")?;
                    continue;
                }
                if let Some(v) = strip_key(l, b"cluster cta") {
                    tb.cluster.get_or_insert_with(ClusterInfo::default).cta = at.dim3(v, "cluster cta")?;
                    continue;
                }
                if let Some(v) = strip_key(l, b"cluster rank") {
                    let r = at.dec_u64(v, "cluster rank")?;
                    tb.cluster.get_or_insert_with(ClusterInfo::default).rank =
                        u32::try_from(r).map_err(|_| at.perr("cluster rank", "out of range".into()))?;
                    continue;
                }
                if let Some(v) = strip_key(l, b"warp") {
                    if let Some(w) = cur.take() {
                        at.finish_warp(&mut tb, w)?;
                    }
                    let id = at.dec_u64(v, "warp")?;
                    let id = u32::try_from(id).map_err(|_| at.perr("warp", "out of range".into()))?;
                    cur = Some((
                        WarpTrace {
                            warp_id: id,
                            ..Default::default()
                        },
                        None,
                    ));
                    continue;
                }
                if let Some(v) = strip_key(l, b"insts") {
                    let n = at.dec_u64(v, "insts")?;
                    match cur.as_mut() {
                        Some((w, exp)) if w.instrs.is_empty() && exp.is_none() => {
                            *exp = Some(n);
                            w.instrs.reserve(n.min(1 << 16) as usize);
                        }
                        Some(_) => {
                            return Err(at.perr("insts", "`insts =` after the warp's instructions".into()))
                        }
                        None => return Err(at.perr("insts", "`insts =` before any `warp =` line".into())),
                    }
                    continue;
                }
            }
            // An instruction line.
            let Some((w, exp)) = cur.as_mut() else {
                return Err(at.perr(
                    "warp",
                    format!("instruction line before any `warp =` line: `{}`", lossy(l)),
                ));
            };
            if let Some(n) = *exp {
                if w.instrs.len() as u64 >= n {
                    return Err(at.perr(
                        "insts",
                        format!(
                            "warp {} has more instruction lines than its `insts = {n}`",
                            w.warp_id
                        ),
                    ));
                }
            }
            if let Err((field, msg)) = parse_instr(line, self.dialect, ops, w) {
                return Err(at.perr(field, msg));
            }
        }
        let end_line = match raw.end.take() {
            Some(Ok(line)) => line,
            Some(Err(e)) => return Err(e),
            None => {
                return Err(at.trunc(
                    "#END_TB",
                    format!(
                        "the thread block that begins at line {} was not read to its end",
                        raw.begin_line
                    ),
                ))
            }
        };
        at.line = end_line;
        if let Some(w) = cur.take() {
            at.finish_warp(&mut tb, w)?;
        }
        if !have_tb {
            return Err(at.perr("thread block", "block without `thread block =` line".into()));
        }
        Ok(ParsedBlock {
            tb,
            ops: None,
            end_line,
        })
    }
}

/// Give the records of `p` the ids of `ops` (interned in the order of the block's own
/// table, which is the order of first appearance in the block: the ids come out as a
/// reader that parsed the blocks one after the other with one table gives them).
pub(crate) fn adopt_opcodes(p: &mut ParsedBlock, ops: &mut OpcodeTable, path: &Path) -> Result<()> {
    let Some(local) = p.ops.take() else {
        return Ok(());
    };
    let mut map: Vec<OpcodeId> = Vec::with_capacity(local.len());
    for i in 0..local.len() {
        let name = local.name(OpcodeId(i as u16));
        let id = ops.intern(name).ok_or_else(|| TraceError::Parse {
            path: path.to_path_buf(),
            line: p.end_line,
            field: "opcode",
            msg: "more than 65536 distinct opcodes".to_string(),
        })?;
        map.push(id);
    }
    for w in &mut p.tb.warps {
        for i in &mut w.instrs {
            i.opcode = map[usize::from(i.opcode.0)];
        }
    }
    Ok(())
}

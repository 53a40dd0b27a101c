//! The microbenchmark dialect: hand-written SASS with control codes and launch/memory
//! directives. The full grammar is documented in `docs/microbench.md`.
//!
//! ```text
//! .gpu rtx3080
//! .grid 1
//! .block 32
//! .init R10 = 1.0
//! .global 0x1000 = f32 [1.0, 2.0]
//! loop:
//! [B------:R-:W2:-:S01] LDG.E R5, [R12.64] ;
//! [B--2---:R-:W-:Y:S04] FADD R4, R5, R10 ;
//!                        BRA loop
//! ```

use crate::syntax::{parse_body, parse_ctrl, parse_int, resolve_labels, reuse_bits, Cur};
use crate::ParseError;
use sassim_isa::{Instruction, Kernel, Reg, RegFile, INSTRUCTION_BYTES};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// A parsed microbenchmark: launch shape, initial state and one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Microbench {
    /// `.gpu NAME`: the GPU preset to simulate.
    pub gpu: Option<String>,
    /// `.grid X[,Y,Z]` (default 1,1,1).
    pub grid: [u32; 3],
    /// `.block X[,Y,Z]` (default 32,1,1).
    pub block: [u32; 3],
    /// `.active_warps 0,4,8`: only these warps of each block run (default: all).
    pub active_warps: Option<Vec<u32>>,
    /// `.init REG = VALUE`, in written order.
    pub inits: Vec<RegInit>,
    /// `.global` / `.global.fill` (alias `.fill`), in written order.
    pub global: Vec<MemInit>,
    /// `.shared` / `.shared.fill`, in written order.
    pub shared: Vec<MemInit>,
    /// The code; its name comes from `.kernel NAME` or the file stem.
    pub kernel: Kernel,
}

/// Initial value of a register in every thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegInit {
    /// An R or UR register.
    pub reg: Reg,
    pub value: InitValue,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum InitValue {
    /// 32-bit integer pattern (wider values are truncated by the consumer).
    Int(i64),
    /// Stored as the f32 bit pattern by the consumer.
    Float(f64),
    /// `tid.x`: the thread's x index within the block.
    TidX,
    /// `lane`: the lane id 0–31.
    Lane,
    /// `warp`: the warp index within the block.
    Warp,
}

/// Initial contents of a memory range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemInit {
    pub addr: u64,
    pub elem: ElemType,
    /// Little-endian bytes, `len = count * elem.size()`.
    pub bytes: Vec<u8>,
}

pub use sassim_isa::ElemType;

impl MemInit {
    /// Number of elements.
    pub fn count(&self) -> usize {
        self.bytes.len() / self.elem.size()
    }
}

/// Read and parse a microbenchmark file.
pub fn parse_file(path: &Path) -> Result<Microbench, ParseError> {
    let file = path.display().to_string();
    let text = crate::read_text(path)?;
    parse(&text, &file)
}

/// Remove `#`, `//` and `/* ... */` comments (replaced by spaces so columns stay right).
fn strip_comments(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let hash = rest.find('#');
        let slash2 = rest.find("//");
        let block = rest.find("/*");
        let first = [hash, slash2, block].into_iter().flatten().min();
        match first {
            None => {
                out.push_str(rest);
                return out;
            }
            Some(i) if Some(i) == block => {
                out.push_str(&rest[..i]);
                match rest[i + 2..].find("*/") {
                    Some(e) => {
                        let stop = i + 2 + e + 2;
                        // Keep columns: one space per character of the comment.
                        out.extend(rest[i..stop].chars().map(|_| ' '));
                        rest = &rest[stop..];
                    }
                    None => return out,
                }
            }
            Some(i) => {
                out.push_str(&rest[..i]);
                return out;
            }
        }
    }
}

struct PendingIns {
    ins: Instruction,
    line: usize,
    label_cols: Vec<(usize, usize)>,
}

fn word<'a>(cur: &mut Cur<'a>) -> &'a str {
    cur.scan(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$')
}

fn expect_end(cur: &mut Cur) -> Result<(), ParseError> {
    cur.skip_ws();
    if cur.at_end() {
        Ok(())
    } else {
        Err(cur.err(format!("expected end of line, found {}", cur.found())))
    }
}

fn parse_u32(cur: &mut Cur, what: &str) -> Result<u32, ParseError> {
    let p = cur.pos;
    let v = parse_int(cur).map_err(|e| ParseError {
        message: format!("expected {what}: {}", e.message),
        ..e
    })?;
    u32::try_from(v).map_err(|_| cur.err_at(p, format!("{what} out of range (0–4294967295)")))
}

fn parse_dims(cur: &mut Cur, what: &str) -> Result<[u32; 3], ParseError> {
    let mut d = [1u32; 3];
    for (i, slot) in d.iter_mut().enumerate() {
        cur.skip_ws();
        let p = cur.pos;
        let v = parse_u32(cur, what)?;
        if v == 0 {
            return Err(cur.err_at(p, format!("{what} must be at least 1")));
        }
        *slot = v;
        cur.skip_ws();
        if i < 2 && !cur.eat(b',') {
            break;
        }
    }
    expect_end(cur)?;
    Ok(d)
}

/// A float literal for data: decimal, `+INF`, `-INF`, `NAN`/`QNAN`, or `0x...` raw bits.
fn parse_float_token(cur: &mut Cur, what: &str) -> Result<(f64, Option<u64>), ParseError> {
    let p = cur.pos;
    let tok = cur.scan(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_'));
    let (neg, body) = match tok.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, tok.strip_prefix('+').unwrap_or(tok)),
    };
    let v = match body {
        "INF" | "inf" => f64::INFINITY,
        "NAN" | "QNAN" | "nan" => f64::NAN,
        b if b.starts_with("0x") && !neg => {
            let bits = u64::from_str_radix(&b[2..], 16)
                .map_err(|_| cur.err_at(p, format!("expected {what}, found `{tok}`")))?;
            return Ok((0.0, Some(bits)));
        }
        b if b.starts_with(|c: char| c.is_ascii_digit() || c == '.') => b
            .parse::<f64>()
            .map_err(|_| cur.err_at(p, format!("expected {what}, found `{tok}`")))?,
        _ => return Err(cur.err_at(p, format!("expected {what}, found `{tok}`"))),
    };
    Ok((if neg { -v } else { v }, None))
}

fn push_elem(cur: &mut Cur, elem: ElemType, out: &mut Vec<u8>) -> Result<(), ParseError> {
    let p = cur.pos;
    match elem {
        ElemType::U32 | ElemType::S32 | ElemType::U64 => {
            let v = parse_int(cur)?;
            let ok = match elem {
                ElemType::U32 => (0..=u32::MAX as i64).contains(&v) || (v < 0 && v >= i32::MIN as i64),
                ElemType::S32 => (i32::MIN as i64..=u32::MAX as i64).contains(&v),
                _ => true,
            };
            if !ok {
                return Err(cur.err_at(p, format!("value out of range for {}", elem.name())));
            }
            if elem == ElemType::U64 {
                out.extend_from_slice(&(v as u64).to_le_bytes());
            } else {
                out.extend_from_slice(&(v as u32).to_le_bytes());
            }
        }
        ElemType::F32 => {
            // Parse the text directly as f32 so that printed values round-trip exactly.
            let save = cur.pos;
            let (v, bits) = parse_float_token(cur, "an f32 value")?;
            let text = cur.slice(save, cur.pos);
            let bits = match bits {
                Some(b) => {
                    u32::try_from(b).map_err(|_| cur.err_at(p, "f32 bit pattern wider than 32 bits"))?
                }
                None => text
                    .parse::<f32>()
                    .map(f32::to_bits)
                    .unwrap_or((v as f32).to_bits()),
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
        ElemType::F64 => {
            let (v, bits) = parse_float_token(cur, "an f64 value")?;
            out.extend_from_slice(&bits.unwrap_or(v.to_bits()).to_le_bytes());
        }
    }
    Ok(())
}

/// `ADDR = TYPE [v, v, ...]` or, with `fill`, `ADDR = TYPE COUNT VALUE`.
fn parse_mem(cur: &mut Cur, fill: bool) -> Result<MemInit, ParseError> {
    cur.skip_ws();
    let p = cur.pos;
    let addr = parse_int(cur)?;
    let addr = u64::try_from(addr).map_err(|_| cur.err_at(p, "address must not be negative"))?;
    cur.skip_ws();
    cur.expect(b'=', "`=`")?;
    cur.skip_ws();
    let p = cur.pos;
    let ty = word(cur);
    let elem = ElemType::from_name(ty).ok_or_else(|| {
        cur.err_at(
            p,
            format!("expected an element type (u32, s32, f32, u64, f64), found `{ty}`"),
        )
    })?;
    cur.skip_ws();
    let mut bytes = Vec::new();
    if fill {
        let p = cur.pos;
        let n = parse_int(cur)?;
        if !(0..=(1 << 24)).contains(&n) {
            return Err(cur.err_at(p, "fill count out of range (0–16777216)"));
        }
        cur.skip_ws();
        let mut one = Vec::new();
        push_elem(cur, elem, &mut one)?;
        for _ in 0..n {
            bytes.extend_from_slice(&one);
        }
    } else {
        let open = cur.pos;
        cur.expect(b'[', "`[` starting the value list")?;
        cur.skip_ws();
        if !cur.eat(b']') {
            loop {
                cur.skip_ws();
                push_elem(cur, elem, &mut bytes)?;
                cur.skip_ws();
                if cur.eat(b']') {
                    break;
                }
                if cur.at_end() {
                    return Err(cur.err_at(open, "unterminated `[`: expected `]`"));
                }
                cur.expect(b',', "`,` or `]`")?;
            }
        }
    }
    expect_end(cur)?;
    Ok(MemInit { addr, elem, bytes })
}

fn parse_init(cur: &mut Cur) -> Result<RegInit, ParseError> {
    cur.skip_ws();
    let p = cur.pos;
    let w = word(cur);
    let reg = match w {
        "RZ" | "URZ" => None,
        _ if w.starts_with("UR") => w[2..].parse::<u8>().ok().filter(|&n| n <= 62).map(Reg::ur),
        _ if w.starts_with('R') => w[1..].parse::<u8>().ok().filter(|&n| n <= 254).map(Reg::r),
        _ => None,
    }
    .ok_or_else(|| cur.err_at(p, format!("expected a register R0–R254 or UR0–UR62, found `{w}`")))?;
    cur.skip_ws();
    cur.expect(b'=', "`=`")?;
    cur.skip_ws();
    let p = cur.pos;
    let value = match cur.peek() {
        Some(c) if c.is_ascii_alphabetic() && !cur.slice(p, cur.end).starts_with("INF") => {
            let w = word(cur);
            match w {
                "tid.x" => InitValue::TidX,
                "lane" => InitValue::Lane,
                "warp" => InitValue::Warp,
                "QNAN" | "NAN" => InitValue::Float(f64::NAN),
                _ => {
                    return Err(cur.err_at(
                        p,
                        format!("expected an integer, a float, `tid.x`, `lane` or `warp`, found `{w}`"),
                    ))
                }
            }
        }
        _ => {
            let tok_end = {
                let save = cur.pos;
                cur.scan(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_'));
                let e = cur.pos;
                cur.pos = save;
                e
            };
            let tok = cur.slice(p, tok_end);
            let body = tok.trim_start_matches(['-', '+']);
            let is_float = !body.starts_with("0x")
                && (body.contains(['.', 'e', 'E']) || body == "INF" || body.contains("NAN"));
            if is_float {
                let (v, _) = parse_float_token(cur, "a float")?;
                InitValue::Float(v)
            } else {
                InitValue::Int(parse_int(cur)?)
            }
        }
    };
    expect_end(cur)?;
    Ok(RegInit { reg, value })
}

/// Parse a microbenchmark. `file` is used in errors and (its stem) as the default kernel name.
pub fn parse(text: &str, file: &str) -> Result<Microbench, ParseError> {
    let mut mb = Microbench {
        gpu: None,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        active_warps: None,
        inits: Vec::new(),
        global: Vec::new(),
        shared: Vec::new(),
        kernel: Kernel {
            name: Path::new(file)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("kernel")
                .to_string(),
            instructions: Vec::new(),
            labels: BTreeMap::new(),
        },
    };
    let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut pending: Vec<PendingIns> = Vec::new();
    let mut pc = 0u64;
    let (mut global_lines, mut shared_lines, mut init_bytes) = (Vec::new(), Vec::new(), 0u64);
    for (ln0, raw) in text.lines().enumerate() {
        let ln = ln0 + 1;
        let line = strip_comments(raw);
        let line = line.as_str();
        let mut cur = Cur::new(file, ln, line, 0, line.len());
        cur.skip_ws();
        if cur.at_end() {
            continue;
        }
        // Label `name:` (possibly followed by an instruction).
        {
            let save = cur.pos;
            let name = word(&mut cur);
            if !name.is_empty() && cur.peek() == Some(b':') && !name.starts_with(|c: char| c.is_ascii_digit())
            {
                cur.bump();
                if mb.kernel.labels.insert(name.to_string(), pc).is_some() {
                    return Err(cur.err_at(save, format!("duplicate label `{name}`")));
                }
                cur.skip_ws();
                if cur.at_end() {
                    continue;
                }
            } else {
                cur.pos = save;
            }
        }
        // Directive.
        if cur.peek() == Some(b'.') {
            let at = cur.pos;
            let d = word(&mut cur);
            let key: &'static str = match d {
                ".gpu" => ".gpu",
                ".kernel" => ".kernel",
                ".grid" => ".grid",
                ".block" => ".block",
                ".active_warps" => ".active_warps",
                ".init" | ".global" | ".shared" | ".fill" | ".global.fill" | ".shared.fill" => "",
                _ => {
                    return Err(cur.err_at(
                        at,
                        format!(
                            "unknown directive `{d}` (expected .gpu, .kernel, .grid, .block, .active_warps, .init, .global, .shared, .fill, .global.fill or .shared.fill)"
                        ),
                    ))
                }
            };
            if !key.is_empty() {
                if let Some(prev) = seen.insert(key, ln) {
                    return Err(cur.err_at(at, format!("duplicate `{key}` directive (first on line {prev})")));
                }
            }
            if !matches!(cur.peek(), Some(b' ' | b'\t')) {
                return Err(cur.err(format!("expected an argument after `{d}`")));
            }
            cur.skip_ws();
            match d {
                ".gpu" | ".kernel" => {
                    let p = cur.pos;
                    let name = cur.scan(|c| !c.is_ascii_whitespace());
                    if name.is_empty() {
                        return Err(cur.err_at(p, format!("expected a name after `{d}`")));
                    }
                    expect_end(&mut cur)?;
                    if d == ".gpu" {
                        mb.gpu = Some(name.to_string());
                    } else {
                        mb.kernel.name = name.to_string();
                    }
                }
                ".grid" => mb.grid = parse_dims(&mut cur, "a grid dimension")?,
                ".block" => mb.block = parse_dims(&mut cur, "a block dimension")?,
                ".active_warps" => {
                    let mut v = Vec::new();
                    loop {
                        cur.skip_ws();
                        v.push(parse_u32(&mut cur, "a warp index")?);
                        cur.skip_ws();
                        if !cur.eat(b',') {
                            break;
                        }
                    }
                    expect_end(&mut cur)?;
                    mb.active_warps = Some(v);
                }
                ".init" => mb.inits.push(parse_init(&mut cur)?),
                ".global" | ".fill" | ".global.fill" => {
                    let m = parse_mem(&mut cur, d != ".global")?;
                    check_mem(&cur, at, &m, false, &mb.global, &global_lines, &mut init_bytes)?;
                    global_lines.push(ln);
                    mb.global.push(m);
                }
                _ => {
                    let m = parse_mem(&mut cur, d != ".shared")?;
                    check_mem(&cur, at, &m, true, &mb.shared, &shared_lines, &mut init_bytes)?;
                    shared_lines.push(ln);
                    mb.shared.push(m);
                }
            }
            continue;
        }
        // Instruction: [ctrl] body [;]
        let ctrl = if cur.peek() == Some(b'[') {
            let c = parse_ctrl(&mut cur)?;
            cur.skip_ws();
            Some(c)
        } else {
            None
        };
        let mut end = line.len();
        if let Some(s) = line.get(cur.pos..).and_then(|r| r.find(';')) {
            let s = cur.pos + s;
            if !line[s + 1..].trim().is_empty() {
                return Err(cur.err_at(s + 1, "unexpected text after `;`"));
            }
            end = s;
        }
        if cur.pos >= end {
            return Err(cur.err("expected an instruction after the control code"));
        }
        let mut body = Cur::new(file, ln, line, cur.pos, end);
        let parsed = parse_body(&mut body, pc)?;
        let mut ins = parsed.ins;
        ins.ctrl = ctrl.unwrap_or_default();
        ins.ctrl.reuse = reuse_bits(&ins);
        pending.push(PendingIns {
            ins,
            line: ln,
            label_cols: parsed.label_cols,
        });
        pc += INSTRUCTION_BYTES;
    }
    for mut p in pending {
        resolve_labels(&mut p.ins, &p.label_cols, &mb.kernel.labels, file, p.line)?;
        mb.kernel.instructions.push(p.ins);
    }
    check_launch(&mb, file, &seen)?;
    Ok(mb)
}

/// Threads of one block at most (CUDA's limit).
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// Warps of the whole launch at most: a microbenchmark keeps every warp's registers and
/// issue log to report them (docs/microbench.md).
pub const MAX_WARPS: u64 = 8192;
/// Bytes of `.global`/`.shared` initial contents at most, all directives together.
pub const MAX_INIT_BYTES: u64 = 256 << 20;
/// End of the `.shared` window: the largest shared memory of a CTA on any preset (228 KB).
pub const MAX_SHARED_BYTES: u64 = 228 * 1024;

/// A memory directive: inside its space, not overlapping an earlier one, within the total.
fn check_mem(
    cur: &Cur,
    at: usize,
    m: &MemInit,
    shared: bool,
    earlier: &[MemInit],
    lines: &[usize],
    total: &mut u64,
) -> Result<(), ParseError> {
    let len = m.bytes.len() as u64;
    *total += len;
    if *total > MAX_INIT_BYTES {
        return Err(cur.err_at(
            at,
            format!("initial memory contents exceed {MAX_INIT_BYTES} bytes (all .global/.shared directives together)"),
        ));
    }
    let end = m
        .addr
        .checked_add(len)
        .filter(|&e| !shared || e <= MAX_SHARED_BYTES);
    let Some(end) = end else {
        return Err(cur.err_at(
            at,
            if shared {
                format!(
                    "{len} bytes at {:#x} end beyond the shared-memory window 0..{MAX_SHARED_BYTES:#x}",
                    m.addr
                )
            } else {
                format!(
                    "{len} bytes at {:#x} run past the end of the address space",
                    m.addr
                )
            },
        ));
    };
    for (e, l) in earlier.iter().zip(lines) {
        let e_end = e.addr + e.bytes.len() as u64;
        if m.addr < e_end && e.addr < end && len > 0 {
            return Err(cur.err_at(
                at,
                format!(
                    "{:#x}..{end:#x} overlaps {:#x}..{e_end:#x} of line {l}",
                    m.addr, e.addr
                ),
            ));
        }
    }
    Ok(())
}

/// Launch shape limits, reported at the `.block` / `.grid` / `.active_warps` line.
fn check_launch(mb: &Microbench, file: &str, seen: &BTreeMap<&'static str, usize>) -> Result<(), ParseError> {
    let line = |k: &str| seen.get(k).copied().unwrap_or(1);
    let threads: u64 = mb.block.iter().map(|&d| u64::from(d)).product();
    if threads > MAX_BLOCK_THREADS {
        return Err(ParseError::new(
            file,
            line(".block"),
            1,
            format!(
                ".block {:?} has {threads} threads; allowed 1..={MAX_BLOCK_THREADS}",
                mb.block
            ),
        ));
    }
    let warps_per_block = threads.div_ceil(32);
    let ctas: u64 = mb.grid.iter().map(|&d| u64::from(d)).product();
    let warps = ctas.saturating_mul(warps_per_block);
    if warps > MAX_WARPS {
        return Err(ParseError::new(
            file,
            line(".grid"),
            1,
            format!(
                ".grid {:?} x {warps_per_block} warps per block = {warps} warps; a microbenchmark allows 1..={MAX_WARPS} (it records every warp)",
                mb.grid
            ),
        ));
    }
    if let Some(a) = &mb.active_warps {
        let mut seen_w = std::collections::BTreeSet::new();
        for &w in a {
            if u64::from(w) >= warps_per_block || !seen_w.insert(w) {
                return Err(ParseError::new(
                    file,
                    line(".active_warps"),
                    1,
                    format!(
                        ".active_warps: warp {w} is {} (a block has warps 0..{warps_per_block})",
                        if u64::from(w) >= warps_per_block {
                            "out of range"
                        } else {
                            "listed twice"
                        }
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn fmt_f64(v: f64) -> String {
    if v.is_nan() {
        "QNAN".to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-INF" } else { "+INF" }.to_string()
    } else {
        format!("{v:?}")
    }
}

fn fmt_elems(m: &MemInit) -> Vec<String> {
    let n = m.elem.size();
    m.bytes
        .chunks_exact(n)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(c);
            let v = u64::from_le_bytes(w);
            match m.elem {
                ElemType::U32 | ElemType::U64 => format!("{v:#x}"),
                ElemType::S32 => format!("{}", v as u32 as i32),
                ElemType::F32 => {
                    let f = f32::from_bits(v as u32);
                    if f.is_nan() {
                        format!("{:#x}", v as u32)
                    } else if f.is_infinite() {
                        if f < 0.0 { "-INF" } else { "+INF" }.to_string()
                    } else {
                        format!("{f:?}")
                    }
                }
                ElemType::F64 => {
                    let f = f64::from_bits(v);
                    if f.is_nan() {
                        format!("{v:#x}")
                    } else {
                        fmt_f64(f)
                    }
                }
            }
        })
        .collect()
}

fn print_mem(s: &mut String, dir: &str, m: &MemInit) {
    let elems = fmt_elems(m);
    let trailing = !m.bytes.chunks_exact(m.elem.size()).remainder().is_empty();
    if elems.len() >= 4 && !trailing && elems.iter().all(|e| *e == elems[0]) {
        let _ = writeln!(
            s,
            "{dir}.fill {:#x} = {} {} {}",
            m.addr,
            m.elem.name(),
            elems.len(),
            elems[0]
        );
    } else {
        let _ = writeln!(
            s,
            "{dir} {:#x} = {} [{}]",
            m.addr,
            m.elem.name(),
            elems.join(", ")
        );
    }
}

/// The instructions of `k` with labels, optionally with `/*pc*/` comments.
pub(crate) fn print_body(k: &Kernel, pcs: bool) -> String {
    let mut s = String::new();
    let mut by_pc: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for (name, pc) in &k.labels {
        by_pc.entry(*pc).or_default().push(name);
    }
    let mut printed = std::collections::BTreeSet::new();
    for ins in &k.instructions {
        if printed.insert(ins.pc) {
            for name in by_pc.get(&ins.pc).into_iter().flatten() {
                let _ = writeln!(s, "{name}:");
            }
        }
        if pcs {
            let _ = writeln!(s, "/*{:04x}*/ {ins}", ins.pc);
        } else {
            let _ = writeln!(s, "{ins}");
        }
    }
    for (pc, names) in &by_pc {
        if !printed.contains(pc) {
            for name in names {
                let _ = writeln!(s, "{name}:");
            }
        }
    }
    s
}

/// Write a microbenchmark back in the dialect; `parse(&print(&m), f) == Ok(m)` for any
/// parsed `m` (PCs are reassigned 0x0, 0x10, … and reuse bits follow the `.reuse` markers).
pub fn print(mb: &Microbench) -> String {
    let mut s = String::new();
    let _ = writeln!(s, ".kernel {}", mb.kernel.name);
    if let Some(g) = &mb.gpu {
        let _ = writeln!(s, ".gpu {g}");
    }
    let [x, y, z] = mb.grid;
    let _ = writeln!(s, ".grid {x},{y},{z}");
    let [x, y, z] = mb.block;
    let _ = writeln!(s, ".block {x},{y},{z}");
    if let Some(w) = &mb.active_warps {
        let v: Vec<String> = w.iter().map(u32::to_string).collect();
        let _ = writeln!(s, ".active_warps {}", v.join(","));
    }
    for i in &mb.inits {
        let v = match i.value {
            InitValue::Int(v) => v.to_string(),
            InitValue::Float(f) => fmt_f64(f),
            InitValue::TidX => "tid.x".to_string(),
            InitValue::Lane => "lane".to_string(),
            InitValue::Warp => "warp".to_string(),
        };
        let r = match i.reg.file {
            RegFile::R => format!("R{}", i.reg.idx),
            RegFile::UR => format!("UR{}", i.reg.idx),
        };
        let _ = writeln!(s, ".init {r} = {v}");
    }
    for m in &mb.global {
        print_mem(&mut s, ".global", m);
    }
    for m in &mb.shared {
        print_mem(&mut s, ".shared", m);
    }
    s.push('\n');
    s.push_str(&print_body(&mb.kernel, false));
    s
}

//! `cuobjdump -sass` and `nvdisasm [-hex]` listings.

use crate::syntax::{parse_body, resolve_labels, reuse_bits, Cur};
use crate::ParseError;
use sassim_isa::{ControlBits, Instruction, Kernel, Listing, INSTRUCTION_BYTES};
use serde_json::{json, Value};
use std::collections::BTreeMap;

struct Pending {
    ins: Instruction,
    line: usize,
    label_cols: Vec<(usize, usize)>,
    lo: Option<u64>,
    hi: Option<u64>,
}

struct KernelBuilder {
    name: String,
    line: usize,
    ins: Vec<Pending>,
    labels: BTreeMap<String, u64>,
    /// Labels seen but not yet attached to an instruction: (name, line, column).
    pending_labels: Vec<(String, usize, usize)>,
}

impl KernelBuilder {
    fn new(name: &str, line: usize) -> KernelBuilder {
        KernelBuilder {
            name: name.to_string(),
            line,
            ins: Vec::new(),
            labels: BTreeMap::new(),
            pending_labels: Vec::new(),
        }
    }

    fn attach_labels(&mut self, pc: u64, file: &str) -> Result<(), ParseError> {
        for (name, line, col) in std::mem::take(&mut self.pending_labels) {
            if let Some(old) = self.labels.insert(name.clone(), pc) {
                if old != pc {
                    return Err(ParseError::new(
                        file,
                        line,
                        col,
                        format!("duplicate label `{name}`"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, file: &str) -> Result<Kernel, ParseError> {
        let end = self
            .ins
            .last()
            .map_or(0, |p| p.ins.pc.saturating_add(INSTRUCTION_BYTES));
        self.attach_labels(end, file)?;
        let mut out = Vec::with_capacity(self.ins.len());
        for mut p in self.ins {
            resolve_labels(&mut p.ins, &p.label_cols, &self.labels, file, p.line)?;
            match (p.lo, p.hi) {
                (Some(lo), Some(hi)) => {
                    p.ins.encoding = Some([lo, hi]);
                    p.ins.ctrl = ControlBits::decode(hi);
                }
                _ => {
                    p.ins.ctrl = ControlBits {
                        reuse: reuse_bits(&p.ins),
                        ..ControlBits::default()
                    };
                }
            }
            out.push(p.ins);
        }
        let _ = self.line;
        Ok(Kernel {
            name: self.name,
            instructions: out,
            labels: self.labels,
        })
    }
}

/// `/* 0x000fe40000000f00 */` → the word.
fn hex_comment(s: &str) -> Option<u64> {
    let inner = s.trim().strip_prefix("/*")?.strip_suffix("*/")?.trim();
    let h = inner.strip_prefix("0x")?;
    if h.is_empty() || h.len() > 16 {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

/// Every `/* 0x... */` comment in `s`, in order (stops at the first that is not a hex word).
fn hex_comments(s: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while rest.starts_with("/*") {
        let Some(e) = rest.find("*/") else { break };
        match hex_comment(&rest[..e + 2]) {
            Some(w) => out.push(w),
            None => break,
        }
        rest = rest[e + 2..].trim_start();
    }
    out
}

fn is_label_line(t: &str) -> Option<&str> {
    let name = t.strip_suffix(':')?;
    (!name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$'))
    .then_some(name)
}

pub(crate) fn parse(text: &str, file: &str) -> Result<Listing, ParseError> {
    let mut listing = Listing::default();
    let mut cur: Option<KernelBuilder> = None;
    // Whether we are past a section header that is not `.text.*` (nvdisasm data sections).
    let mut in_other_section = false;
    let mut saw_anything = false;
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("kernel")
        .to_string();

    for (ln0, line) in text.lines().enumerate() {
        let ln = ln0 + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        // Architecture.
        if let Some(rest) = t.strip_prefix(".target") {
            let a = rest.trim();
            let a = a.split_whitespace().next().unwrap_or(a);
            match &listing.arch {
                None if !a.is_empty() => listing.arch = Some(a.to_string()),
                Some(prev) if prev != a && !a.is_empty() => {
                    return Err(ParseError::new(
                        file,
                        ln,
                        indent + 1,
                        format!("listing contains several architectures ({prev}, {a}); one Listing holds one architecture, split the file (cuobjdump -arch)"),
                    ))
                }
                _ => {}
            }
            continue;
        }
        // cuobjdump function header.
        if let Some(rest) = t
            .strip_prefix("Function :")
            .or_else(|| t.strip_prefix("Function:"))
        {
            if let Some(k) = cur.take() {
                listing.kernels.push(k.finish(file)?);
            }
            let name = rest.trim();
            if name.is_empty() {
                return Err(ParseError::new(
                    file,
                    ln,
                    indent + 1,
                    "expected a function name after `Function :`",
                ));
            }
            cur = Some(KernelBuilder::new(name, ln));
            in_other_section = false;
            saw_anything = true;
            continue;
        }
        // nvdisasm section header.
        if let Some(rest) = t.strip_prefix(".section").filter(|r| r.starts_with([' ', '\t'])) {
            if let Some(k) = cur.take() {
                listing.kernels.push(k.finish(file)?);
            }
            let sec = rest.trim().split(',').next().unwrap_or("").trim();
            saw_anything = true;
            if let Some(name) = sec.strip_prefix(".text.") {
                cur = Some(KernelBuilder::new(name, ln));
                in_other_section = false;
            } else {
                in_other_section = true;
            }
            continue;
        }
        if t.starts_with("Fatbin") {
            if let Some(k) = cur.take() {
                listing.kernels.push(k.finish(file)?);
            }
            in_other_section = true;
            continue;
        }
        if in_other_section {
            continue;
        }
        // Hex word continuation line.
        if t.starts_with("/*")
            && !t.starts_with("/*0")
            && !t[2..].starts_with(|c: char| c.is_ascii_hexdigit())
        {
            if let Some(w) = hex_comment(t) {
                if let Some(k) = cur.as_mut() {
                    if let Some(p) = k.ins.last_mut() {
                        if p.lo.is_none() {
                            p.lo = Some(w);
                        } else if p.hi.is_none() {
                            p.hi = Some(w);
                        }
                    }
                }
            }
            continue;
        }
        // Instruction line `/*0070*/  body ;  /* 0x... */`.
        if let Some(rest) = t.strip_prefix("/*") {
            let Some(close) = rest.find("*/") else {
                return Err(ParseError::new(
                    file,
                    ln,
                    indent + 1,
                    "unterminated `/*` comment: expected `*/`",
                ));
            };
            let addr = &rest[..close];
            if addr.is_empty() || !addr.bytes().all(|c| c.is_ascii_hexdigit()) {
                continue; // some other comment
            }
            let pc = u64::from_str_radix(addr, 16).map_err(|_| {
                ParseError::new(file, ln, indent + 3, format!("bad instruction address `{addr}`"))
            })?;
            // Byte offsets in `line`.
            let body_start = indent + 2 + close + 2;
            let after = &line[body_start..];
            let trimmed_after = after.trim_start();
            if trimmed_after.starts_with('.') {
                continue; // data (.byte/.word) outside a text section
            }
            if cur.is_none() {
                // Headerless listing (nvdisasm of a raw binary): one implicit kernel.
                cur = Some(KernelBuilder::new(&stem, ln));
                saw_anything = true;
            }
            let k = cur.as_mut().expect("kernel");
            let comment = after.find("/*").map(|i| body_start + i);
            let semi = after.find(';').map(|i| body_start + i);
            let body_end = match (semi, comment) {
                (Some(s), Some(c)) if s < c => s,
                (Some(s), None) => s,
                (_, Some(c)) => c,
                (None, None) => line.len(),
            };
            if let Some(s) = semi {
                let tail_end = comment.unwrap_or(line.len());
                if s < tail_end && !line[s + 1..tail_end].trim().is_empty() {
                    return Err(ParseError::new(
                        file,
                        ln,
                        line[..s + 1].chars().count() + 1,
                        "unexpected text after `;`",
                    ));
                }
            }
            // Instructions are 16 bytes, in address order, without gaps: the engines find
            // an instruction by its address and fall through to the next one.
            let want = k.ins.last().map_or(0, |p| p.ins.pc + INSTRUCTION_BYTES);
            if k.ins.is_empty() && pc % INSTRUCTION_BYTES != 0 || !k.ins.is_empty() && pc != want {
                return Err(ParseError::new(
                    file,
                    ln,
                    indent + 3,
                    if k.ins.is_empty() {
                        format!("instruction address {pc:#06x} is not a multiple of {INSTRUCTION_BYTES}")
                    } else {
                        format!(
                            "instruction address {pc:#06x} does not follow the previous one: expected {want:#06x} (instructions are {INSTRUCTION_BYTES} bytes, in order, without gaps)"
                        )
                    },
                ));
            }
            k.attach_labels(pc, file)?;
            let mut c = Cur::new(file, ln, line, body_start, body_end);
            let parsed = parse_body(&mut c, pc)?;
            // `/* 0x<lo> */`, or both words on one line: `/* 0x<lo> */ /* 0x<hi> */`.
            let words = comment.map(|c| hex_comments(&line[c..])).unwrap_or_default();
            k.ins.push(Pending {
                ins: parsed.ins,
                line: ln,
                label_cols: parsed.label_cols,
                lo: words.first().copied(),
                hi: words.get(1).copied(),
            });
            continue;
        }
        // Labels (nvdisasm): `.L_x_0:`, `vec_add:`; `.text.vec_add:` is the section itself.
        if let Some(name) = is_label_line(t) {
            if let Some(k) = cur.as_mut() {
                if !name.starts_with(".text.") {
                    k.pending_labels.push((name.to_string(), ln, indent + 1));
                }
            }
            continue;
        }
        // Everything else (directives, headers, banners) is ignored.
    }
    if let Some(k) = cur.take() {
        listing.kernels.push(k.finish(file)?);
    }
    if listing.kernels.is_empty() {
        let _ = saw_anything;
        return Err(ParseError::new(
            file,
            1,
            1,
            "expected a cuobjdump -sass (`Function : name`) or nvdisasm (`.section .text.name`) listing; no function found",
        ));
    }
    Ok(listing)
}

/// One JSON object per instruction: `kernel`, `pc`, `opcode`, `guard`, `operands` (strings),
/// `stall`, `yield`, `read_sb`, `write_sb`, `wait_mask`, `reuse`, `ctrl`, `text`, `encoding`.
pub fn disasm_json(listing: &Listing) -> Value {
    let mut out = Vec::new();
    for k in &listing.kernels {
        for ins in &k.instructions {
            out.push(json!({
                "kernel": k.name,
                "arch": listing.arch,
                "pc": ins.pc,
                "guard": ins.guard.map(|g| g.to_string()),
                "opcode": ins.opcode.to_string(),
                "operands": ins.operands.iter().map(|o| o.to_string()).collect::<Vec<_>>(),
                "stall": ins.ctrl.stall,
                "yield": ins.ctrl.yield_,
                "read_sb": ins.ctrl.read_sb,
                "write_sb": ins.ctrl.write_sb,
                "wait_mask": ins.ctrl.wait_mask,
                "reuse": ins.ctrl.reuse,
                "ctrl": ins.ctrl.to_string(),
                "text": ins.body(),
                "encoding": ins.encoding.map(|[lo, hi]| vec![format!("{lo:#018x}"), format!("{hi:#018x}")]),
            }));
        }
    }
    Value::Array(out)
}

/// Each kernel in the microbenchmark dialect, with `/*pc*/` comments and labels.
/// The output of one kernel is itself a valid microbenchmark file.
pub fn disasm_text(listing: &Listing) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for (i, k) in listing.kernels.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        match &listing.arch {
            Some(a) => {
                let _ = writeln!(s, "// {} ({a})", k.name);
            }
            None => {
                let _ = writeln!(s, "// {}", k.name);
            }
        }
        let _ = writeln!(s, ".kernel {}", k.name);
        s.push_str(&crate::microbench::print_body(k, true));
    }
    s
}

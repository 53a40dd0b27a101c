//! Instruction-body and control-code grammar shared by the listing and dialect parsers.

use crate::ParseError;
use sassim_isa::operand::{PT, RZ, URZ};
use sassim_isa::{
    AddrReg, Address, ConstBank, ConstRef, ControlBits, Imm, Instruction, Opcode, Operand, OperandKind, Pred,
    PredReg, Reg, RegFile, Target, NUM_DEP_COUNTERS,
};
use std::collections::BTreeMap;

/// Opcodes whose last hex immediate is a branch target (`BRA 0x70`, `BSSY B0, 0x120`).
const BRANCH_OPS: &[&str] = &[
    "BRA", "BRX", "JMP", "JMX", "CALL", "RET", "BSSY", "SSY", "PBK", "PCNT", "CAL", "JCAL", "PRET", "BRK",
];

/// A cursor over one line of text, limited to `[pos, end)`.
pub(crate) struct Cur<'a> {
    pub file: &'a str,
    pub line: usize,
    pub text: &'a str,
    pub pos: usize,
    pub end: usize,
}

fn is_label_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$'
}
fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Cur<'a> {
    pub fn new(file: &'a str, line: usize, text: &'a str, pos: usize, end: usize) -> Cur<'a> {
        let end = end.min(text.len());
        Cur {
            file,
            line,
            text,
            pos: pos.min(end),
            end,
        }
    }
    pub fn peek(&self) -> Option<u8> {
        if self.pos < self.end {
            self.text.as_bytes().get(self.pos).copied()
        } else {
            None
        }
    }
    pub fn peek_at(&self, k: usize) -> Option<u8> {
        if self.pos + k < self.end {
            self.text.as_bytes().get(self.pos + k).copied()
        } else {
            None
        }
    }
    pub fn at_end(&self) -> bool {
        self.pos >= self.end
    }
    pub fn bump(&mut self) {
        if self.pos < self.end {
            self.pos += 1;
        }
    }
    pub fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }
    /// Column (1-based, in characters) of byte offset `pos`.
    pub fn col(&self, pos: usize) -> usize {
        let mut p = pos.min(self.text.len());
        while !self.text.is_char_boundary(p) {
            p -= 1;
        }
        self.text[..p].chars().count() + 1
    }
    pub fn err_at(&self, pos: usize, msg: impl Into<String>) -> ParseError {
        ParseError::new(self.file, self.line, self.col(pos), msg)
    }
    pub fn err(&self, msg: impl Into<String>) -> ParseError {
        self.err_at(self.pos, msg)
    }
    /// What is at the cursor, for error messages.
    pub fn found(&self) -> String {
        if self.at_end() {
            return "end of instruction".to_string();
        }
        let rest = self.text.get(self.pos..self.end).unwrap_or("");
        let tok: String = rest.chars().take_while(|c| !c.is_whitespace()).take(16).collect();
        format!("`{tok}`")
    }
    pub fn slice(&self, a: usize, b: usize) -> &'a str {
        self.text.get(a..b).unwrap_or("")
    }
    /// Scan while `f` holds; returns the scanned text.
    pub fn scan(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let a = self.pos;
        while let Some(c) = self.peek() {
            if f(c) {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.slice(a, self.pos)
    }
    pub fn expect(&mut self, c: u8, what: &str) -> Result<(), ParseError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected {what}, found {}", self.found())))
        }
    }
}

/// Parse an unsigned integer written in hex (`0x1f`) or decimal (`31`).
fn parse_uint(cur: &mut Cur) -> Result<u64, ParseError> {
    let start = cur.pos;
    if cur.peek() == Some(b'0') && matches!(cur.peek_at(1), Some(b'x' | b'X')) {
        cur.pos += 2;
        let digits = cur.scan(|c| c.is_ascii_hexdigit());
        if digits.is_empty() {
            return Err(cur.err("expected hex digits after `0x`"));
        }
        if cur.peek().is_some_and(is_word_char) {
            return Err(cur.err(format!("expected hex digit, found {}", cur.found())));
        }
        u64::from_str_radix(digits, 16).map_err(|_| cur.err_at(start, "hex number does not fit in 64 bits"))
    } else {
        let digits = cur.scan(|c| c.is_ascii_digit());
        if digits.is_empty() {
            return Err(cur.err(format!("expected a number, found {}", cur.found())));
        }
        if cur.peek().is_some_and(is_word_char) {
            return Err(cur.err(format!("expected digit, found {}", cur.found())));
        }
        digits
            .parse::<u64>()
            .map_err(|_| cur.err_at(start, "number does not fit in 64 bits"))
    }
}

/// Signed integer (hex or decimal) as i64.
pub(crate) fn parse_int(cur: &mut Cur) -> Result<i64, ParseError> {
    let start = cur.pos;
    let neg = cur.eat(b'-');
    if !neg {
        cur.eat(b'+');
    }
    let v = parse_uint(cur)?;
    if neg {
        if v > 1u64 << 63 {
            return Err(cur.err_at(start, "number out of range"));
        }
        Ok((v as i64).wrapping_neg())
    } else {
        Ok(v as i64)
    }
}

/// Parse a decimal or float literal body (no sign): `1`, `0.5`, `2.38e-07`.
fn parse_decimal_float(cur: &mut Cur) -> Result<f64, ParseError> {
    let start = cur.pos;
    cur.scan(|c| c.is_ascii_digit());
    if cur.peek() == Some(b'.')
        && cur
            .peek_at(1)
            .is_some_and(|c| c.is_ascii_digit() || !is_word_char(c))
    {
        cur.bump();
        cur.scan(|c| c.is_ascii_digit());
    }
    if matches!(cur.peek(), Some(b'e' | b'E')) {
        let save = cur.pos;
        cur.bump();
        if matches!(cur.peek(), Some(b'+' | b'-')) {
            cur.bump();
        }
        if cur.scan(|c| c.is_ascii_digit()).is_empty() {
            cur.pos = save;
            return Err(cur.err("expected exponent digits"));
        }
    }
    let s = cur.slice(start, cur.pos);
    if cur.peek().is_some_and(is_word_char) {
        return Err(cur.err(format!("expected a number, found {}", cur.found())));
    }
    s.parse::<f64>()
        .map_err(|_| cur.err_at(start, format!("expected a number, found `{s}`")))
}

/// A register name (`R5`, `RZ`, `UR4`, `URZ`) as a [`Reg`], or `None` if `w` is no register.
fn reg_of(cur: &Cur, w: &str, at: usize) -> Result<Option<Reg>, ParseError> {
    match w {
        "RZ" => return Ok(Some(Reg::r(RZ))),
        "URZ" => return Ok(Some(Reg::ur(URZ))),
        _ => {}
    }
    let (file, digits) = if let Some(d) = w.strip_prefix("UR") {
        (RegFile::UR, d)
    } else if let Some(d) = w.strip_prefix('R') {
        (RegFile::R, d)
    } else {
        return Ok(None);
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Ok(None);
    }
    let max = match file {
        RegFile::R => 254u64,
        RegFile::UR => 62,
    };
    match digits.parse::<u64>() {
        Ok(n) if n <= max => Ok(Some(match file {
            RegFile::R => Reg::r(n as u8),
            RegFile::UR => Reg::ur(n as u8),
        })),
        _ => Err(cur.err_at(
            at,
            match file {
                RegFile::R => format!("unknown register `{w}` (expected R0–R254 or RZ)"),
                RegFile::UR => format!("unknown register `{w}` (expected UR0–UR62 or URZ)"),
            },
        )),
    }
}

fn small_index(
    cur: &Cur,
    w: &str,
    prefix: &str,
    max: u64,
    at: usize,
    what: &str,
) -> Result<Option<u8>, ParseError> {
    let Some(d) = w.strip_prefix(prefix) else {
        return Ok(None);
    };
    if d.is_empty() || !d.bytes().all(|c| c.is_ascii_digit()) {
        return Ok(None);
    }
    match d.parse::<u64>() {
        Ok(n) if n <= max => Ok(Some(n as u8)),
        _ => Err(cur.err_at(at, format!("unknown register `{w}` (expected {what})"))),
    }
}

fn pred_of(cur: &Cur, w: &str, at: usize) -> Result<Option<PredReg>, ParseError> {
    match w {
        "PT" => {
            return Ok(Some(PredReg {
                uniform: false,
                idx: PT,
            }))
        }
        "UPT" => {
            return Ok(Some(PredReg {
                uniform: true,
                idx: PT,
            }))
        }
        _ => {}
    }
    if let Some(i) = small_index(cur, w, "UP", 6, at, "UP0–UP6 or UPT")? {
        return Ok(Some(PredReg {
            uniform: true,
            idx: i,
        }));
    }
    if let Some(i) = small_index(cur, w, "P", 6, at, "P0–P6 or PT")? {
        return Ok(Some(PredReg {
            uniform: false,
            idx: i,
        }));
    }
    Ok(None)
}

/// Parse `[R2.64+UR4-0x10]` (the cursor is on `[`).
fn parse_address(cur: &mut Cur, desc: Option<u8>) -> Result<Address, ParseError> {
    let open = cur.pos;
    cur.expect(b'[', "`[`")?;
    let mut regs = Vec::new();
    let mut offset: i64 = 0;
    let mut first = true;
    loop {
        cur.skip_ws();
        let mut neg = false;
        if cur.at_end() {
            return Err(cur.err_at(open, "unterminated `[`: expected `]`"));
        }
        if !first {
            if cur.eat(b'-') {
                neg = true;
            } else if !cur.eat(b'+') {
                return Err(cur.err(format!(
                    "expected `+`, `-` or `]` in address, found {}",
                    cur.found()
                )));
            } else {
                // nvdisasm writes a negative immediate after `+`: `[R2+-0x8]`.
                cur.skip_ws();
                neg = cur.eat(b'-');
            }
            cur.skip_ws();
        } else if cur.eat(b'-') {
            neg = true;
            cur.skip_ws();
        }
        let at = cur.pos;
        match cur.peek() {
            Some(c) if c.is_ascii_digit() => {
                let v = parse_uint(cur)? as i64;
                let v = if neg { v.wrapping_neg() } else { v };
                offset = offset
                    .checked_add(v)
                    .ok_or_else(|| cur.err_at(at, "address offset out of range"))?;
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let w = cur.scan(is_word_char);
                let Some(reg) = reg_of(cur, w, at)? else {
                    return Err(cur.err_at(
                        at,
                        format!("expected a register or offset in address, found `{w}`"),
                    ));
                };
                if neg {
                    return Err(cur.err_at(at, "a register in an address cannot be negated"));
                }
                let mut ar = AddrReg {
                    reg,
                    wide: false,
                    scale: 1,
                    suffix: None,
                };
                let mut extra: Vec<&str> = Vec::new();
                while cur.peek() == Some(b'.') && cur.peek_at(1).is_some_and(is_word_char) {
                    cur.bump();
                    let s = cur.scan(is_word_char);
                    match s {
                        "64" if extra.is_empty() && ar.scale == 1 => ar.wide = true,
                        "X4" | "X8" | "X16" if extra.is_empty() && ar.scale == 1 => {
                            ar.scale = s[1..].parse().unwrap_or(1)
                        }
                        _ => extra.push(s),
                    }
                }
                if !extra.is_empty() {
                    ar.suffix = Some(extra.join("."));
                }
                regs.push(ar);
            }
            Some(b']') => {
                return Err(cur.err(if first {
                    "expected a register or offset in address, found `]`".to_string()
                } else {
                    "expected a register or offset after the sign".to_string()
                }))
            }
            _ => {
                return Err(cur.err(format!(
                    "expected a register or offset in address, found {}",
                    cur.found()
                )))
            }
        }
        first = false;
        cur.skip_ws();
        if cur.eat(b']') {
            break;
        }
        if cur.at_end() {
            return Err(cur.err_at(open, "unterminated `[`: expected `]`"));
        }
    }
    Ok(Address { desc, regs, offset })
}

/// Parse one operand at the cursor. Returns the operand and, for a label target, true.
/// `[URx]` after a descriptor keyword (`desc[UR4]`, `gdesc[UR4]`): the register index.
fn bracketed_ureg(cur: &mut Cur, what: &str) -> Result<u8, ParseError> {
    cur.bump();
    cur.skip_ws();
    let p = cur.pos;
    let w2 = cur.scan(is_word_char);
    let d = match reg_of(cur, w2, p)? {
        Some(r) if r.file == RegFile::UR => r.idx,
        _ => {
            return Err(cur.err_at(
                p,
                format!("expected a uniform register in `{what}[..]`, found `{w2}`"),
            ))
        }
    };
    cur.skip_ws();
    cur.expect(b']', "`]` after the descriptor register")?;
    Ok(d)
}

fn parse_operand(cur: &mut Cur) -> Result<Operand, ParseError> {
    let mut not = false;
    let mut neg = false;
    let mut abs = false;
    let mut plus = false;
    let start = cur.pos;
    if cur.eat(b'!') || cur.eat(b'~') {
        not = true;
    }
    if cur.eat(b'-') {
        neg = true;
    } else if cur.eat(b'+') {
        plus = true;
    }
    if cur.eat(b'|') {
        abs = true;
    }
    let at = cur.pos;
    let c = match cur.peek() {
        Some(c) => c,
        None => return Err(cur.err("expected an operand, found end of instruction")),
    };
    let mut kind = match c {
        b'[' => OperandKind::Mem(parse_address(cur, None)?),
        b'{' => {
            cur.bump();
            let mut v = Vec::new();
            loop {
                cur.skip_ws();
                let p = cur.pos;
                let d = cur.scan(|c| c.is_ascii_digit());
                match d.parse::<u64>() {
                    Ok(n) if n < NUM_DEP_COUNTERS as u64 => v.push(n as u8),
                    Ok(_) => {
                        return Err(
                            cur.err_at(p, format!("dependence counter `{d}` out of range (expected 0–5)"))
                        )
                    }
                    Err(_) => {
                        return Err(cur.err(format!("expected a counter number 0–5, found {}", cur.found())))
                    }
                }
                cur.skip_ws();
                if cur.eat(b'}') {
                    break;
                }
                if cur.at_end() {
                    return Err(cur.err_at(at, "unterminated `{`: expected `}`"));
                }
                cur.expect(b',', "`,` or `}`")?;
            }
            OperandKind::SbSet(v)
        }
        b'`' => {
            cur.bump();
            cur.expect(b'(', "`(` after backtick")?;
            let name = cur.scan(is_label_char);
            if name.is_empty() {
                return Err(cur.err(format!("expected a label name, found {}", cur.found())));
            }
            if !cur.eat(b')') {
                return Err(if cur.at_end() {
                    cur.err_at(at, "unterminated `` `( ``: expected `)`")
                } else {
                    cur.err(format!("expected `)`, found {}", cur.found()))
                });
            }
            OperandKind::Target(Target::Label {
                name: name.to_string(),
                backtick: true,
                addr: None,
            })
        }
        // Texture and surface shapes (`TEX ... 2D, ...`): a digit and letters.
        c if c.is_ascii_digit()
            && cur
                .peek_at(1)
                .is_some_and(|d| d.is_ascii_uppercase() && d != b'X')
            && !(abs || neg || not) =>
        {
            let w = cur.scan(is_word_char);
            OperandKind::Keyword(w.to_string())
        }
        c if c.is_ascii_digit() => {
            let imm = if c == b'0' && matches!(cur.peek_at(1), Some(b'x' | b'X')) {
                let v = parse_uint(cur)?;
                if neg {
                    if v > 1u64 << 63 {
                        return Err(cur.err_at(at, "immediate out of range"));
                    }
                    Imm::Int((v as i64).wrapping_neg())
                } else {
                    Imm::Int(v as i64)
                }
            } else {
                let v = parse_decimal_float(cur)?;
                Imm::Float(if neg { -v } else { v })
            };
            if abs || not || plus {
                return Err(cur.err_at(start, "modifiers `|`, `!`, `~`, `+` are not allowed on a number"));
            }
            neg = false;
            OperandKind::Imm(imm)
        }
        c if c.is_ascii_alphabetic() || c == b'_' || c == b'.' || c == b'$' => {
            let w = cur.scan(is_word_char);
            let next = cur.peek();
            if (w == "c" || w == "cx") && next == Some(b'[') {
                let bank = if w == "c" {
                    cur.bump();
                    cur.skip_ws();
                    let p = cur.pos;
                    let b = parse_uint(cur)?;
                    let b = u32::try_from(b).map_err(|_| cur.err_at(p, "constant bank out of range"))?;
                    cur.skip_ws();
                    cur.expect(b']', "`]` after the constant bank")?;
                    ConstBank::Imm(b)
                } else {
                    cur.bump();
                    cur.skip_ws();
                    let p = cur.pos;
                    let w2 = cur.scan(is_word_char);
                    let b = match reg_of(cur, w2, p)? {
                        Some(r) if r.file == RegFile::UR => ConstBank::UReg(r.idx),
                        _ => {
                            return Err(cur.err_at(
                                p,
                                format!("expected a uniform register in `cx[..]`, found `{w2}`"),
                            ))
                        }
                    };
                    cur.skip_ws();
                    cur.expect(b']', "`]` after the constant bank register")?;
                    b
                };
                if cur.peek() != Some(b'[') {
                    return Err(cur.err(format!("expected `[` (constant address), found {}", cur.found())));
                }
                OperandKind::Const(ConstRef {
                    bank,
                    addr: parse_address(cur, None)?,
                })
            } else if w == "desc" && next == Some(b'[') {
                let d = bracketed_ureg(cur, "desc")?;
                if cur.peek() != Some(b'[') {
                    return Err(cur.err(format!("expected `[` after `desc[..]`, found {}", cur.found())));
                }
                OperandKind::Mem(parse_address(cur, Some(d))?)
            } else if w == "gdesc" && next == Some(b'[') {
                // Hopper warpgroup MMA: `gdesc[UR4]` = four uniform registers holding the A
                // and B shared-memory matrix descriptors.
                OperandKind::GmmaDesc(bracketed_ureg(cur, "gdesc")?)
            } else if w == "INF" || w == "QNAN" || w == "NAN" {
                if abs || not {
                    return Err(cur.err_at(start, "modifiers are not allowed on a float constant"));
                }
                let v = if w == "INF" { f64::INFINITY } else { f64::NAN };
                let v = if neg { -v } else { v };
                neg = false;
                OperandKind::Imm(Imm::Float(v))
            } else if w.starts_with("SR_") || w == "SRZ" {
                // Special registers may contain dots: SR_TID.X.
                let mut end = cur.pos;
                while cur.peek() == Some(b'.') && cur.peek_at(1).is_some_and(is_word_char) {
                    let save = cur.pos;
                    cur.bump();
                    let s = cur.scan(is_word_char);
                    if s == "reuse" {
                        cur.pos = save;
                        break;
                    }
                    end = cur.pos;
                }
                cur.pos = end;
                OperandKind::Special(cur.slice(at, end).to_string())
            } else if w == "PR" {
                OperandKind::PredBits
            } else if let Some(r) = reg_of(cur, w, at)? {
                OperandKind::Reg(r)
            } else if let Some(p) = pred_of(cur, w, at)? {
                OperandKind::Pred(p)
            } else if let Some(b) = small_index(cur, w, "SB", 5, at, "SB0–SB5")? {
                OperandKind::Sb(b)
            } else if let Some(b) = small_index(cur, w, "B", 15, at, "B0–B15")? {
                OperandKind::BReg(b)
            } else if w
                .strip_prefix("gsb")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
            {
                // Hopper's warpgroup-MMA group scoreboard (`HGMMA … gsb0`,
                // `WARPGROUP.DEPBAR.LE gsb0, 0x0`).
                OperandKind::Keyword(w.to_string())
            } else {
                // A label (microbench dialect: `BRA loop`).
                cur.pos = at;
                let name = cur.scan(is_label_char);
                let name = name.strip_suffix(".reuse").unwrap_or(name);
                cur.pos = at + name.len();
                if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(cur.err_at(at, format!("expected an operand, found {}", cur.found())));
                }
                OperandKind::Target(Target::Label {
                    name: name.to_string(),
                    backtick: false,
                    addr: None,
                })
            }
        }
        _ => return Err(cur.err(format!("expected an operand, found {}", cur.found()))),
    };
    if plus && !matches!(kind, OperandKind::Imm(_)) {
        return Err(cur.err_at(start, "`+` is only allowed before a number or INF"));
    }
    let mut op = Operand::new(OperandKind::PredBits);
    let mut suffixes = Vec::new();
    let mut reuse = false;
    let mut closed = !abs;
    loop {
        if cur.peek() == Some(b'.') && cur.peek_at(1).is_some_and(is_word_char) {
            // `2..5`: a number's suffix cannot start with a digit (printed back, it would
            // read as the number's fraction).
            if matches!(kind, OperandKind::Imm(_)) && cur.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
                return Err(cur.err_at(cur.pos, "a number cannot be followed by `.` and a digit"));
            }
            cur.bump();
            let s = cur.scan(is_word_char);
            if s == "reuse" {
                reuse = true;
            } else {
                suffixes.push(s.to_string());
            }
        } else if !closed && cur.peek() == Some(b'|') {
            cur.bump();
            closed = true;
        } else {
            break;
        }
    }
    if !closed {
        return Err(cur.err(format!(
            "expected `|` closing `|{}`, found {}",
            cur.slice(at, cur.pos),
            cur.found()
        )));
    }
    if not {
        match &mut kind {
            OperandKind::Pred(_) | OperandKind::Reg(_) | OperandKind::Const(_) | OperandKind::Imm(_) => {}
            _ => return Err(cur.err_at(start, "`!`/`~` is only allowed on a predicate or register")),
        }
    }
    op.kind = kind;
    op.neg = neg;
    op.abs = abs;
    op.not = not;
    op.reuse = reuse;
    op.suffixes = suffixes;
    Ok(op)
}

/// A parsed instruction body plus where its label operands are (operand index, column).
pub(crate) struct ParsedBody {
    pub ins: Instruction,
    pub label_cols: Vec<(usize, usize)>,
}

/// Parse `[@P0] OPCODE op, op, ...` between `cur.pos` and `cur.end` (no `;`).
pub(crate) fn parse_body(cur: &mut Cur, pc: u64) -> Result<ParsedBody, ParseError> {
    cur.skip_ws();
    let mut guard = None;
    if cur.eat(b'@') {
        let neg = cur.eat(b'!');
        let at = cur.pos;
        let w = cur.scan(is_word_char);
        match pred_of(cur, w, at)? {
            Some(reg) => guard = Some(Pred { reg, neg }),
            None => {
                return Err(cur.err_at(
                    at,
                    format!("expected a guard predicate (P0–P6, PT, UP0–UP6, UPT), found `{w}`"),
                ))
            }
        }
        cur.skip_ws();
    }
    let at = cur.pos;
    if !cur.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
        return Err(cur.err(format!("expected an opcode, found {}", cur.found())));
    }
    let op = cur.scan(|c| is_word_char(c) || c == b'.');
    if op.ends_with('.') || op.contains("..") {
        return Err(cur.err_at(at, format!("malformed opcode `{op}`")));
    }
    if cur.peek().is_some_and(|c| !matches!(c, b' ' | b'\t' | b'\r')) {
        return Err(cur.err(format!(
            "expected whitespace after the opcode, found {}",
            cur.found()
        )));
    }
    let opcode = Opcode::parse(op);
    let mut operands = Vec::new();
    let mut label_cols = Vec::new();
    cur.skip_ws();
    if !cur.at_end() {
        loop {
            let at = cur.pos;
            let o = parse_operand(cur)?;
            if matches!(o.kind, OperandKind::Target(Target::Label { .. })) {
                label_cols.push((operands.len(), cur.col(at)));
            }
            operands.push(o);
            cur.skip_ws();
            if cur.at_end() {
                break;
            }
            if cur.eat(b',') {
                cur.skip_ws();
                if cur.at_end() {
                    return Err(cur.err("expected an operand after `,`"));
                }
                continue;
            }
            // nvdisasm's annotation of indirect branches: `(*"BRANCH_TARGETS .L_x_1,..."*)`.
            if cur.peek() == Some(b'(') && cur.peek_at(1) == Some(b'*') {
                let rest = &cur.text[cur.pos..cur.end];
                match rest.find("*)") {
                    Some(i) => {
                        cur.pos += i + 2;
                        cur.skip_ws();
                        if cur.at_end() {
                            break;
                        }
                        return Err(cur.err(format!(
                            "expected end of instruction after `*)`, found {}",
                            cur.found()
                        )));
                    }
                    None => return Err(cur.err("unterminated `(*` annotation: expected `*)`")),
                }
            }
            // `RET.REL.NODEC R2 `(f)`, `BRX R10 -0x2a0`: nvdisasm omits the comma before a
            // target or the offset of an indirect branch.
            if matches!(cur.peek(), Some(b'`'))
                || cur.peek().is_some_and(|c| c.is_ascii_digit())
                || (cur.peek() == Some(b'-') && cur.peek_at(1).is_some_and(|c| c.is_ascii_digit()))
            {
                continue;
            }
            return Err(cur.err(format!(
                "expected `,` or end of instruction, found {}",
                cur.found()
            )));
        }
    }
    // `BRA 0x70`: the last hex immediate of a branch is a target address.
    if BRANCH_OPS.contains(&opcode.base.as_str()) {
        if let Some(last) = operands.last_mut() {
            if let OperandKind::Imm(Imm::Int(v)) = last.kind {
                if v >= 0 && !last.neg && !last.abs && !last.not && last.suffixes.is_empty() {
                    last.kind = OperandKind::Target(Target::Addr(v as u64));
                }
            }
        }
    }
    let mut ins = Instruction {
        pc,
        guard,
        opcode,
        operands,
        ctrl: ControlBits::default(),
        encoding: None,
    };
    sassim_isa::infer_widths(&mut ins);
    Ok(ParsedBody { ins, label_cols })
}

/// Reuse bits implied by the `.reuse` markers (source slot k = bit k).
pub(crate) fn reuse_bits(ins: &Instruction) -> u8 {
    let mut r = 0u8;
    for (k, o) in ins.source_operands().iter().enumerate() {
        if o.reuse && k < 8 {
            r |= 1 << k;
        }
    }
    r
}

/// Resolve label operands against `labels`.
pub(crate) fn resolve_labels(
    ins: &mut Instruction,
    label_cols: &[(usize, usize)],
    labels: &BTreeMap<String, u64>,
    file: &str,
    line: usize,
) -> Result<(), ParseError> {
    for &(i, col) in label_cols {
        if let Some(OperandKind::Target(Target::Label { name, addr, .. })) =
            ins.operands.get_mut(i).map(|o| &mut o.kind)
        {
            match labels.get(name.as_str()) {
                Some(a) => *addr = Some(*a),
                None => {
                    return Err(ParseError::new(
                        file,
                        line,
                        col,
                        format!("undefined label `{name}`"),
                    ))
                }
            }
        }
    }
    Ok(())
}

/// Parse a control code `[B0--3--:R-:W2:Y:S02]` (cursor on `[`).
pub(crate) fn parse_ctrl(cur: &mut Cur) -> Result<ControlBits, ParseError> {
    let open = cur.pos;
    let form = "control code `[B------:R-:W-:-:S01]`";
    cur.expect(b'[', "`[`")?;
    let mut c = ControlBits::default();
    cur.expect(b'B', &format!("`B` (wait mask) in {form}"))?;
    for k in 0..NUM_DEP_COUNTERS {
        match cur.peek() {
            Some(b'-') => {}
            Some(d) if d == b'0' + k as u8 => c.wait_mask |= 1 << k,
            Some(d) if d.is_ascii_digit() => {
                return Err(cur.err(format!(
                    "wait mask position {k} must be `{k}` or `-`, found `{}`",
                    d as char
                )))
            }
            _ => {
                return Err(cur.err(format!(
                    "expected `{k}` or `-` at wait-mask position {k} in {form}, found {}",
                    cur.found()
                )))
            }
        }
        cur.bump();
    }
    let counter = |cur: &mut Cur, letter: u8, what: &str| -> Result<Option<u8>, ParseError> {
        cur.expect(b':', &format!("`:` in {form}"))?;
        cur.expect(
            letter,
            &format!("`{}` ({what} counter) in {form}", letter as char),
        )?;
        match cur.peek() {
            Some(b'-') => {
                cur.bump();
                Ok(None)
            }
            Some(d) if d.is_ascii_digit() => {
                let p = cur.pos;
                let s = cur.scan(|c| c.is_ascii_digit());
                match s.parse::<u8>() {
                    Ok(v) if (v as usize) < NUM_DEP_COUNTERS => Ok(Some(v)),
                    _ => Err(cur.err_at(
                        p,
                        format!("{what} counter `{s}` out of range (expected 0–5 or `-`)"),
                    )),
                }
            }
            _ => Err(cur.err(format!(
                "expected a {what} counter 0–5 or `-`, found {}",
                cur.found()
            ))),
        }
    };
    c.read_sb = counter(cur, b'R', "read")?;
    c.write_sb = counter(cur, b'W', "write")?;
    cur.expect(b':', &format!("`:` in {form}"))?;
    match cur.peek() {
        Some(b'Y') => c.yield_ = true,
        Some(b'-') => c.yield_ = false,
        _ => return Err(cur.err(format!("expected `Y` or `-` (yield), found {}", cur.found()))),
    }
    cur.bump();
    cur.expect(b':', &format!("`:` in {form}"))?;
    cur.expect(b'S', &format!("`S` (stall) in {form}"))?;
    let p = cur.pos;
    let s = cur.scan(|c| c.is_ascii_digit());
    if s.is_empty() {
        return Err(cur.err(format!("expected stall cycles 00–15, found {}", cur.found())));
    }
    match s.parse::<u32>() {
        Ok(v) if v <= 15 => c.stall = v as u8,
        _ => return Err(cur.err_at(p, format!("stall `{s}` out of range (expected 00–15)"))),
    }
    if !cur.eat(b']') {
        return Err(if cur.at_end() {
            cur.err_at(open, "unterminated control code: expected `]`")
        } else {
            cur.err(format!(
                "expected `]` closing the control code, found {}",
                cur.found()
            ))
        });
    }
    Ok(c)
}

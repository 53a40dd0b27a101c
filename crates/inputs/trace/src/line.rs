//! One instruction line of a text trace: its fields, registers and address block.

use crate::header::Dialect;
use crate::record::{flags, AddrMode, OpcodeTable, Reg, TraceInstr, WarpTrace, MAX_DST, MAX_SRC};
use crate::scan::{parse_hex, parse_i64, parse_u64, Toks};
use crate::text::lossy;

/// The field of a line that is wrong, and what is wrong with it.
pub(crate) type FieldErr = (&'static str, String);

#[inline(always)]
fn need<'a, const Q: bool>(t: &mut Toks<'a, Q>, field: &'static str) -> Result<&'a [u8], FieldErr> {
    t.next()
        .ok_or_else(|| (field, "missing (line ends early)".to_string()))
}

#[inline(always)]
fn dec<const Q: bool>(t: &mut Toks<'_, Q>, field: &'static str) -> Result<u64, FieldErr> {
    if let Some(v) = t.quick_u64() {
        return Ok(v);
    }
    let tok = need(t, field)?;
    parse_u64(tok).ok_or_else(|| (field, format!("bad decimal number `{}`", lossy(tok))))
}

#[inline(always)]
fn sdec<const Q: bool>(t: &mut Toks<'_, Q>, field: &'static str) -> Result<i64, FieldErr> {
    if let Some(v) = t.quick_i64() {
        return Ok(v);
    }
    let tok = need(t, field)?;
    parse_i64(tok).ok_or_else(|| (field, format!("bad signed decimal number `{}`", lossy(tok))))
}

#[inline(always)]
fn hex<const Q: bool>(t: &mut Toks<'_, Q>, field: &'static str) -> Result<u64, FieldErr> {
    if let Some(v) = t.quick_hex() {
        return Ok(v);
    }
    let tok = need(t, field)?;
    parse_hex(tok).ok_or_else(|| (field, format!("bad hex number `{}`", lossy(tok))))
}

fn regs<const Q: bool>(
    t: &mut Toks<'_, Q>,
    n: usize,
    out: &mut [Reg],
    field: &'static str,
) -> Result<(), FieldErr> {
    for (i, o) in out.iter_mut().enumerate().take(n) {
        if let Some(r) = t.quick_r() {
            *o = Reg::r(r);
            continue;
        }
        let tok = t
            .next()
            .ok_or_else(|| (field, format!("count says {n} registers, line ends after {i}")))?;
        *o = Reg::parse(tok).ok_or_else(|| {
            (
                field,
                format!(
                    "count says {n} registers, token {} is `{}`, not a register",
                    i + 1,
                    lossy(tok)
                ),
            )
        })?;
    }
    Ok(())
}

/// Decode the address block of a memory instruction into `out`.
fn parse_addrs<const Q: bool>(
    t: &mut Toks<'_, Q>,
    mode: AddrMode,
    mask: u32,
    out: &mut Vec<u64>,
) -> Result<(), FieldErr> {
    let n = mask.count_ones() as usize;
    match mode {
        AddrMode::ListAll => {
            out.reserve(n);
            for i in 0..n {
                if let Some(v) = t.quick_hex() {
                    out.push(v);
                    continue;
                }
                let tok = t.next().ok_or_else(|| {
                    (
                        "address",
                        format!("expected {n} addresses (popcount of mask), found {i}"),
                    )
                })?;
                out.push(
                    parse_hex(tok).ok_or_else(|| ("address", format!("bad hex address `{}`", lossy(tok))))?,
                );
            }
        }
        AddrMode::BaseStride => {
            let base = hex(t, "address base")?;
            let stride = sdec(t, "stride")?;
            if n > 0 {
                let first = mask.trailing_zeros();
                let run = (mask >> first).trailing_ones() as usize;
                let mut a = base;
                for i in 0..n {
                    if i < run {
                        out.push(a);
                        a = a.wrapping_add(stride as u64);
                    } else {
                        // Upstream leaves lanes after the first run at 0.
                        out.push(0);
                    }
                }
            }
        }
        AddrMode::BaseDelta => {
            let base = hex(t, "address base")?;
            if n > 0 {
                out.push(base);
                let mut a = base;
                for i in 1..n {
                    if let Some(d) = t.quick_i64() {
                        a = a.wrapping_add(d as u64);
                        out.push(a);
                        continue;
                    }
                    let tok = t.next().ok_or_else(|| {
                        (
                            "address delta",
                            format!(
                                "expected {} deltas (popcount of mask - 1), found {}",
                                n - 1,
                                i - 1
                            ),
                        )
                    })?;
                    let d = parse_i64(tok)
                        .ok_or_else(|| ("address delta", format!("bad signed delta `{}`", lossy(tok))))?;
                    a = a.wrapping_add(d as u64);
                    out.push(a);
                }
            }
        }
    }
    Ok(())
}

/// Is `op` a Hopper TMA/bulk-copy opcode whose address block has a different
/// layout (not supported yet)?
fn is_tma(op: &str) -> bool {
    let base = op.split('.').next().unwrap_or(op);
    matches!(
        base,
        "UTMALDG" | "UTMASTG" | "UTMAPF" | "UTMAREDG" | "UBLKCP" | "UBLKPF" | "UBLKRED"
    )
}

/// Parse one instruction line and append it to `w`.
pub(crate) fn parse_instr(
    line: &[u8],
    d: Dialect,
    ops: &mut OpcodeTable,
    w: &mut WarpTrace,
) -> Result<(), FieldErr> {
    parse_instr_with::<true>(line, d, ops, w)
}

/// [`parse_instr`]; `QUICK`: numbers are read by the one-pass scans where they can be
/// (see [`crate::scan`]), else only by the general token parsers (the tests compare both).
fn parse_instr_with<const QUICK: bool>(
    line: &[u8],
    d: Dialect,
    ops: &mut OpcodeTable,
    w: &mut WarpTrace,
) -> Result<(), FieldErr> {
    let mut t = Toks::<QUICK>::new(line);
    let mut ins = TraceInstr::default();
    if d.block_prefix {
        dec(&mut t, "tb_x")?;
        dec(&mut t, "tb_y")?;
        dec(&mut t, "tb_z")?;
        dec(&mut t, "warpid_tb")?;
    }
    if d.lineinfo {
        ins.line =
            u32::try_from(dec(&mut t, "line_num")?).map_err(|_| ("line_num", "out of range".to_string()))?;
    }
    ins.pc = u32::try_from(hex(&mut t, "pc")?).map_err(|_| ("pc", "PC above 32 bits".to_string()))?;
    ins.mask = u32::try_from(hex(&mut t, "mask")?).map_err(|_| ("mask", "mask above 32 bits".to_string()))?;
    let nd = dec(&mut t, "dest_num")? as usize;
    if nd > MAX_DST {
        return Err((
            "dest_num",
            format!("{nd} destination registers (at most {MAX_DST})"),
        ));
    }
    ins.n_dst = nd as u8;
    regs(&mut t, nd, &mut ins.dst, "dest reg")?;
    let op = need(&mut t, "opcode")?;
    if !op[0].is_ascii_alphabetic() {
        return Err((
            "opcode",
            format!(
                "`{}` is not an opcode (wrong dest_num or register count?)",
                lossy(op)
            ),
        ));
    }
    ins.opcode = ops
        .intern_bytes(op)
        .map_err(|_| ("opcode", "not UTF-8".to_string()))?
        .ok_or_else(|| ("opcode", "more than 65536 distinct opcodes".to_string()))?;
    let op = ops.name(ins.opcode);
    let ns = dec(&mut t, "src_num")? as usize;
    if ns > MAX_SRC {
        return Err(("src_num", format!("{ns} source registers (at most {MAX_SRC})")));
    }
    ins.n_src = ns as u8;
    regs(&mut t, ns, &mut ins.src, "src reg")?;
    if d.hopper && op.contains("GMMA") {
        ins.flags |= flags::HAS_GMMA_FIELD;
        if dec(&mut t, "gmma_commit")? != 0 {
            ins.flags |= flags::GMMA_COMMIT;
        }
    }
    let mw = dec(&mut t, "mem_width")?;
    ins.mem_width = u8::try_from(mw).map_err(|_| ("mem_width", format!("{mw} out of range")))?;
    let mut last_field = "src reg";
    if ins.mem_width > 0 {
        if d.hopper && is_tma(op) {
            return Err((
                "addr_mode",
                format!("TMA address block of `{op}` is not supported"),
            ));
        }
        let m = dec(&mut t, "addr_mode")?;
        ins.addr_mode = u8::try_from(m)
            .ok()
            .and_then(AddrMode::from_u8)
            .ok_or_else(|| ("addr_mode", format!("unknown address compression mode {m}")))?;
        ins.addr_start = u32::try_from(w.addrs.len())
            .map_err(|_| ("address", "more than 2^32 addresses in one warp".to_string()))?;
        parse_addrs(&mut t, ins.addr_mode, ins.mask, &mut w.addrs)?;
        last_field = "address";
    }
    for i in 0..usize::from(d.immediates) {
        // Optional: older v5 writers may omit trailing immediates.
        if let Some(v) = t.quick_i64() {
            ins.imm[i] = v;
            last_field = "immediate";
            continue;
        }
        let Some(tok) = t.next() else { break };
        ins.imm[i] = parse_i64(tok).ok_or_else(|| {
            (
                "immediate",
                format!("bad immediate `{}` (wrong count of addresses?)", lossy(tok)),
            )
        })?;
        last_field = "immediate";
    }
    if d.values {
        if let Some(tok) = t.next() {
            match tok {
                b"NoVal" => {}
                b"Val" => {
                    ins.flags |= flags::HAS_VALUES;
                    ins.val_start = u32::try_from(w.values.len())
                        .map_err(|_| ("values", "value arena overflow".to_string()))?;
                    for _ in 0..nd + ns {
                        let n = dec(&mut t, "value count")?;
                        if n > 64 {
                            return Err(("value count", format!("{n} values for one operand")));
                        }
                        w.values.push(n);
                        for _ in 0..n {
                            w.values.push(hex(&mut t, "value")?);
                        }
                    }
                }
                _ => {
                    return Err((
                        "values",
                        format!("expected `Val` or `NoVal`, got `{}`", lossy(tok)),
                    ))
                }
            }
            last_field = "values";
        }
    }
    if let Some(tok) = t.next() {
        return Err((
            last_field,
            format!(
                "unexpected extra token `{}` (wrong count of registers or addresses?)",
                lossy(tok)
            ),
        ));
    }
    w.instrs.push(ins);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::KernelHeader;
    use crate::record::ThreadBlockTrace;
    use crate::text::{TextParser, TextWriter};

    /// A table and a warp for each way.
    #[derive(Default)]
    struct Both {
        ops: OpcodeTable,
        w: WarpTrace,
        ops_g: OpcodeTable,
        w_g: WarpTrace,
    }

    impl Both {
        /// Both ways on one line: the same result, the same records appended. Whether the
        /// line parsed.
        fn parse(&mut self, line: &[u8], d: Dialect) -> bool {
            let (n, a, v) = (self.w.instrs.len(), self.w.addrs.len(), self.w.values.len());
            let quick = parse_instr_with::<true>(line, d, &mut self.ops, &mut self.w);
            let general = parse_instr_with::<false>(line, d, &mut self.ops_g, &mut self.w_g);
            let text = String::from_utf8_lossy(line);
            assert_eq!(quick, general, "line `{text}`");
            assert_eq!(self.w.instrs.get(n..), self.w_g.instrs.get(n..), "line `{text}`");
            assert_eq!(self.w.addrs.get(a..), self.w_g.addrs.get(a..), "line `{text}`");
            assert_eq!(self.w.values.get(v..), self.w_g.values.get(v..), "line `{text}`");
            assert_eq!(self.ops.len(), self.ops_g.len(), "line `{text}`");
            quick.is_ok()
        }
    }

    /// The instruction lines of every fixture trace, with their headers.
    fn fixture_lines() -> Vec<(KernelHeader, Vec<Vec<u8>>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/traces");
        let mut files: Vec<_> = std::fs::read_dir(&root)
            .expect("fixtures/traces")
            .flat_map(|d| std::fs::read_dir(d.expect("entry").path()).into_iter().flatten())
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "traceg"))
            .collect();
        files.sort();
        assert!(files.len() >= 19, "{files:?}");
        files
            .iter()
            .map(|p| {
                let f = std::fs::File::open(p).expect("open");
                let (mut tp, h) = TextParser::open(p, Box::new(std::io::BufReader::new(f))).expect("header");
                let mut lines = Vec::new();
                while let Some(raw) = tp.next_raw().expect("block") {
                    for l in raw.text.split(|&b| b == b'\n') {
                        let l = l.strip_suffix(b"\r").unwrap_or(l);
                        if l.first().is_some_and(u8::is_ascii_digit) {
                            lines.push(l.to_vec());
                        }
                    }
                }
                (h, lines)
            })
            .collect()
    }

    /// `w`'s instructions as text lines with every address listed (mode 0), as the
    /// text writer prints them (16 digits each), and with the leading zeros left out.
    fn list_all_lines(h: &KernelHeader, ops: &OpcodeTable, w: &WarpTrace) -> Vec<Vec<u8>> {
        let mut w = w.clone();
        for i in &mut w.instrs {
            i.addr_mode = AddrMode::ListAll;
        }
        let tb = ThreadBlockTrace {
            warps: vec![w],
            ..Default::default()
        };
        let mut out = TextWriter::new(Vec::new(), h, std::path::Path::new("t")).expect("writer");
        out.write_block(&tb, ops).expect("write");
        let text = out.finish().expect("finish");
        let lines: Vec<Vec<u8>> = text
            .split(|&c| c == b'\n')
            .filter(|l| l.first().is_some_and(u8::is_ascii_digit))
            .map(<[u8]>::to_vec)
            .collect();
        let short = lines.iter().map(|l| {
            let s = String::from_utf8_lossy(l).replace(" 0x0000", " 0x");
            s.into_bytes()
        });
        lines.iter().cloned().chain(short).collect()
    }

    #[test]
    fn quick_and_general_parse_every_fixture_line_alike() {
        let mut n = 0;
        let mut modes = [0usize; 3];
        for (h, lines) in fixture_lines() {
            let d = h.dialect();
            let mut b = Both::default();
            for l in &lines {
                assert!(b.parse(l, d));
                if let Some(i) = b.w.instrs.last().filter(|i| i.is_mem()) {
                    modes[i.addr_mode as usize] += 1;
                }
                n += 1;
            }
            assert_eq!(b.w, b.w_g);
            // The fixtures list no addresses one by one (mode 0): the same lines so.
            let mut all = Both::default();
            for l in list_all_lines(&h, &b.ops, &b.w) {
                assert!(all.parse(&l, d));
                if let Some(i) = all.w.instrs.last().filter(|i| i.is_mem()) {
                    modes[i.addr_mode as usize] += 1;
                }
                n += 1;
            }
            assert_eq!(all.w, all.w_g);
            assert_eq!(all.w.instrs.len(), 2 * b.w.instrs.len());
        }
        // Every address mode occurs, so each way of the address block was compared.
        assert!(n > 100_000, "{n} lines");
        assert!(modes.iter().all(|&m| m > 1000), "{modes:?}");
    }

    #[test]
    fn quick_and_general_fail_alike_on_malformed_lines() {
        let junk: [&[u8]; 21] = [
            b"",
            b"R256",
            b"R0001",
            b"R1x",
            b"RZ",
            b"UR4",
            b"0x",
            b"0x7f00",
            b"0x7fc84152000g",
            b"0x10000000000000000",
            b"0x000000000000000000007f",
            b"18446744073709551616",
            b"99999999999999999999",
            b"-9223372036854775809",
            b"NaN",
            b"-inf",
            b"1e3",
            b"R",
            b"\xff\xfe",
            b"0x7fc841520000\t",
            b"-",
        ];
        let mut failed = 0;
        for (h, lines) in fixture_lines() {
            let d = h.dialect();
            // A sample of each trace's lines, memory lines first (they have the most fields).
            let mut sample: Vec<&Vec<u8>> = lines.iter().filter(|l| l.len() > 40).take(40).collect();
            sample.extend(lines.iter().step_by(lines.len() / 20 + 1));
            for l in sample {
                let toks: Vec<(usize, usize)> = {
                    let mut v = Vec::new();
                    let mut i = 0;
                    while i < l.len() {
                        if l[i] == b' ' {
                            i += 1;
                            continue;
                        }
                        let st = i;
                        while i < l.len() && l[i] != b' ' {
                            i += 1;
                        }
                        v.push((st, i));
                    }
                    v
                };
                let mut variants: Vec<Vec<u8>> = Vec::new();
                // Cut anywhere (truncated hex, a missing field).
                for cut in 0..l.len() {
                    variants.push(l[..cut].to_vec());
                }
                for &(a, b) in &toks {
                    // A token replaced by junk, dropped, doubled, or followed by a digit
                    // (one digit too many: 17 hex digits, 20 decimal ones).
                    for j in junk {
                        variants.push([&l[..a], j, &l[b..]].concat());
                    }
                    variants.push([&l[..a], &l[b..]].concat());
                    variants.push([&l[..b], b" ", &l[a..]].concat());
                    variants.push([&l[..b], b"7", &l[b..]].concat());
                    variants.push([&l[..a], b"00000000000", &l[a..]].concat());
                    variants.push([&l[..b], b"\x0b", &l[b..]].concat());
                }
                let mut b = Both::default();
                for v in &variants {
                    failed += usize::from(!b.parse(v, d));
                }
            }
        }
        assert!(failed > 10_000, "{failed} malformed lines failed");
    }
}

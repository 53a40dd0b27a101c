//! The opcode survey of the CUDA program suite, `workloads/programs/OPCODES.md`, is generated
//! here from the committed listings (`workloads/programs/sass/*.nvdisasm-hex`, indexed by
//! `sass/INDEX.txt`): every listing is parsed with `sassim_sass::parse_listing` and every
//! instruction decoded with `sassim_functional::decode::decode`. The test fails when the
//! committed file differs from what the listings give today, naming the first differing line;
//! `SASSIM_BLESS=1` rewrites the file instead.
//!
//! It lives in this crate because `decode` is here and `sassim-sass` is already one of its
//! dev-dependencies: no new dependency, and only the functional engine is built to run it.

use sassim_functional::decode::{decode, Op};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const SURVEY: &str = "workloads/programs/OPCODES.md";
const SASS: &str = "workloads/programs/sass";
const TEST: &str = "crates/functional/tests/opcode_survey.rs";
const REGENERATE: &str = "SASSIM_BLESS=1 cargo test --release -p sassim-functional --test opcode_survey";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One cubin row of `sass/INDEX.txt`.
struct IndexRow {
    program: String,
    arch: String,
    sha: String,
    /// Kernels the index names (none for nvcc's device-link stub).
    kernels: Vec<String>,
}

/// The cubin rows of the index, and the PTX-only rows as (program, arch).
fn read_index(text: &str) -> (Vec<IndexRow>, Vec<(String, String)>) {
    let mut rows = Vec::new();
    let mut ptx = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            f.len(),
            4,
            "{SASS}/INDEX.txt line {}: expected 4 fields: {line}",
            n + 1
        );
        if f[2] == "ptx" {
            ptx.push((f[0].to_string(), f[1].to_string()));
            continue;
        }
        let kernels = if f[3] == "-" {
            Vec::new()
        } else {
            f[3].split(',').map(str::to_string).collect()
        };
        rows.push(IndexRow {
            program: f[0].to_string(),
            arch: f[1].to_string(),
            sha: f[2].to_string(),
            kernels,
        });
    }
    (rows, ptx)
}

/// Static sites of one thing (an opcode form, a decoder gap): count, programs, first example.
#[derive(Default)]
struct Sites {
    count: usize,
    programs: BTreeSet<String>,
    /// The smallest `program:function@pc` (sorted by program, function, pc).
    example: Option<(String, String, u64)>,
}

impl Sites {
    /// One site, in a listing that `programs` (sorted, not empty) share.
    fn add(&mut self, programs: &[String], function: &str, pc: u64) {
        self.count += 1;
        self.programs.extend(programs.iter().cloned());
        let e = (programs[0].clone(), function.to_string(), pc);
        if self.example.as_ref().is_none_or(|x| e < *x) {
            self.example = Some(e);
        }
    }
    fn line(&self, what: &str) -> String {
        let progs: Vec<&str> = self.programs.iter().map(String::as_str).collect();
        let n = self.count;
        let plural = if n == 1 { "" } else { "s" };
        let mut s = format!("{what}  [{n} site{plural}; programs: {}]", progs.join(","));
        if let Some((p, f, pc)) = &self.example {
            let _ = write!(s, "  e.g. {p}:{f}@{pc:#x}");
        }
        s
    }
}

#[derive(Default)]
struct ArchStats {
    listings: usize,
    stubs: usize,
    functions: usize,
    instructions: usize,
    /// Opcode with modifiers (`IMAD.WIDE.U32`) -> sites.
    forms: BTreeMap<String, usize>,
    /// `Op::Unsupported` message -> sites.
    gaps: BTreeMap<String, Sites>,
}

struct ParseFailure {
    file: String,
    arch: String,
    programs: Vec<String>,
    line: usize,
    column: usize,
    message: String,
}

/// Everything the survey says, computed from the listings.
struct Survey {
    archs: BTreeMap<String, ArchStats>,
    /// (program, arch) -> (functions, instructions).
    per_program: BTreeMap<String, BTreeMap<String, (usize, usize)>>,
    /// Kernel-less stubs: (arch, file, programs whose fat binary holds it).
    stubs: Vec<(String, String, Vec<String>)>,
    failures: Vec<ParseFailure>,
    /// Functions a listing defines that the index does not name as kernels: (arch, file, name).
    non_kernels: Vec<(String, String, String)>,
    /// Kernels the index names that the listing lacks: (arch, file, name).
    missing_kernels: Vec<(String, String, String)>,
    ptx_only: Vec<(String, String)>,
}

fn compute() -> Survey {
    let dir = root().join(SASS);
    let index = std::fs::read_to_string(dir.join("INDEX.txt")).expect("reads sass/INDEX.txt");
    let (rows, ptx_only) = read_index(&index);
    // Listings by SHA-256: its arch, kernels and the programs that hold it.
    let mut by_sha: BTreeMap<&str, (&str, &[String], Vec<String>)> = BTreeMap::new();
    for r in &rows {
        let e = by_sha
            .entry(r.sha.as_str())
            .or_insert((r.arch.as_str(), &r.kernels, Vec::new()));
        assert_eq!(
            e.0, r.arch,
            "{SASS}/INDEX.txt: cubin {} listed for two architectures",
            r.sha
        );
        e.2.push(r.program.clone());
    }
    // Every committed listing is in the index.
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("reads the sass directory")
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter_map(|n| n.strip_suffix(".nvdisasm-hex").map(str::to_string))
        .collect();
    for f in &on_disk {
        assert!(
            by_sha.contains_key(f.as_str()),
            "{SASS}/{f}.nvdisasm-hex is not in INDEX.txt"
        );
    }

    let mut s = Survey {
        archs: BTreeMap::new(),
        per_program: BTreeMap::new(),
        stubs: Vec::new(),
        failures: Vec::new(),
        non_kernels: Vec::new(),
        missing_kernels: Vec::new(),
        ptx_only,
    };
    for (sha, (arch, kernels, mut programs)) in by_sha {
        programs.sort();
        programs.dedup();
        let file = format!("{SASS}/{sha}.nvdisasm-hex");
        let text = std::fs::read_to_string(root().join(&file))
            .unwrap_or_else(|e| panic!("{file} (named in INDEX.txt): {e}"));
        let a = s.archs.entry(arch.to_string()).or_default();
        // nvcc's device-link stub: the index names no kernel and nvlink wrote no function.
        let has_function = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with(".section") && l.contains(".text.")
        });
        if kernels.is_empty() && !has_function {
            a.stubs += 1;
            s.stubs.push((arch.to_string(), file, programs));
            continue;
        }
        a.listings += 1;
        let listing = match sassim_sass::parse_listing(&text, &file) {
            Ok(l) => l,
            Err(e) => {
                s.failures.push(ParseFailure {
                    file,
                    arch: arch.to_string(),
                    programs,
                    line: e.line,
                    column: e.column,
                    message: e.message,
                });
                continue;
            }
        };
        for k in kernels {
            if listing.kernel(k).is_none() {
                s.missing_kernels
                    .push((arch.to_string(), file.clone(), k.clone()));
            }
        }
        for f in &listing.kernels {
            if !kernels.contains(&f.name) {
                s.non_kernels
                    .push((arch.to_string(), file.clone(), f.name.clone()));
            }
            a.functions += 1;
            a.instructions += f.instructions.len();
            for p in &programs {
                let c = s
                    .per_program
                    .entry(p.clone())
                    .or_default()
                    .entry(arch.to_string())
                    .or_default();
                c.0 += 1;
                c.1 += f.instructions.len();
            }
            for ins in &f.instructions {
                *a.forms.entry(ins.opcode.to_string()).or_default() += 1;
                if let Op::Unsupported(what) = decode(ins).op {
                    a.gaps.entry(what).or_default().add(&programs, &f.name, ins.pc);
                }
            }
        }
    }
    s
}

/// `sass/0123456789ab…`: a listing's name, short enough for a table.
fn short(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    format!("`{}…`", &name[..name.len().min(12)])
}

fn programs_phrase(programs: &[String]) -> String {
    let n = programs.len();
    format!(
        "{n} program{} ({})",
        if n == 1 { "" } else { "s" },
        programs.join(", ")
    )
}

fn render(s: &Survey) -> String {
    let archs: Vec<&str> = s.archs.keys().map(String::as_str).collect();
    let mut o = String::new();
    let w = &mut o;
    let _ = write!(
        w,
        "# Opcode survey of the program suite

Generated by `{TEST}`; do not edit. It is computed from the
committed listings (`sass/*.nvdisasm-hex`, indexed by `sass/INDEX.txt`): each is parsed with
`sassim_sass::parse_listing` and every instruction decoded with
`sassim_functional::decode::decode`. That test fails when this file differs from what the
listings give; regenerate it with

    {REGENERATE}

Counts are static sites: instructions in the listings (with the padding after a function's
last EXIT, a `BRA` to itself and `NOP`s), a cubin shared by programs counted once, over all
programs including `refuse_*` and `fault_*`.

## Listings

| arch | cubin listings | functions | instructions | opcodes | opcode+modifier forms | decoder `Unsupported` sites | kernel-less stubs |
|---|---|---|---|---|---|---|---|
"
    );
    for (arch, a) in &s.archs {
        let bases: BTreeSet<&str> = a.forms.keys().map(|f| f.split('.').next().unwrap_or(f)).collect();
        let gaps: usize = a.gaps.values().map(|g| g.count).sum();
        let _ = writeln!(
            w,
            "| {arch} | {} | {} | {} | {} | {} | {gaps} | {} |",
            a.listings,
            a.functions,
            a.instructions,
            bases.len(),
            a.forms.len(),
            a.stubs
        );
    }
    let _ = write!(
        w,
        "
{} kernel-less listings, nvcc's device-link stubs (nvlink output with no `.text.*` function,
`-` in INDEX.txt), are not parsed:

",
        s.stubs.len()
    );
    for (arch, file, programs) in &s.stubs {
        let _ = writeln!(w, "- {} {arch}: {}", short(file), programs_phrase(programs));
    }
    for (program, arch) in &s.ptx_only {
        let _ = writeln!(w, "- {program} {arch}: PTX only, no cubin");
    }

    let _ = write!(w, "\n## Listings the SASS parser rejects\n\n");
    if s.failures.is_empty() {
        let _ = writeln!(
            w,
            "None: `parse_listing` accepts every listing that has a function."
        );
    } else {
        let _ = writeln!(w, "| listing | arch | programs | line:column | error |");
        let _ = writeln!(w, "|---|---|---|---|---|");
        for f in &s.failures {
            let _ = writeln!(
                w,
                "| `{}` | {} | {} | {}:{} | {} |",
                f.file,
                f.arch,
                f.programs.join(", "),
                f.line,
                f.column,
                f.message.replace('|', "\\|")
            );
        }
    }
    if !s.missing_kernels.is_empty() {
        let _ = write!(w, "\nKernels INDEX.txt names that the parsed listing lacks:\n\n");
        for (arch, file, k) in &s.missing_kernels {
            let _ = writeln!(w, "- {} {arch}: `{k}`", short(file));
        }
    }
    if !s.non_kernels.is_empty() {
        let _ = write!(
            w,
            "\nFunctions the listings define besides the kernels INDEX.txt names (counted above):\n\n"
        );
        for (arch, file, k) in &s.non_kernels {
            let _ = writeln!(w, "- {} {arch}: `{k}`", short(file));
        }
    }

    let _ = write!(
        w,
        "
## Decoder gaps

Instructions for which `decode()` returns `Op::Unsupported`: an opcode or modifier combination
`decode_op` does not match, or an operand it cannot represent. The text is what a warp that
executes one reports (\"unsupported: TEXT at pc ...\"); a program that never executes them
still runs.
"
    );
    for (arch, a) in &s.archs {
        let _ = write!(w, "\n### {arch}\n\n");
        if a.gaps.is_empty() {
            let _ = writeln!(w, "None.");
            continue;
        }
        let _ = writeln!(w, "```");
        for (what, g) in &a.gaps {
            let _ = writeln!(w, "{}", g.line(what));
        }
        let _ = writeln!(w, "```");
    }

    let _ = write!(
        w,
        "
## Executor refusals

Not listed: past the decoder, the executor (`crates/functional/src/exec*`) refuses operand
forms and modes when a warp executes them (`ExecError::Unsupported`, \"unsupported: OPCODE
(why) at pc ...\"), which a pass over the listings cannot tell without repeating its checks.
They are found by running: the `suite_passes_on_*` tests of `crates/cli/tests/exec.rs` run
every program under `sassim exec` (each must print PASS), and the `refuse_*` programs (README,
\"Refusal tests\") and their tests in the same file check what sassim must refuse.

## Static sites per program

Instructions (functions) in each program's cubins, device-link stubs excluded.

| program | {} |
|---|{}
",
        archs.join(" | "),
        "---|".repeat(archs.len())
    );
    for (p, by_arch) in &s.per_program {
        let cells: Vec<String> = archs
            .iter()
            .map(|a| match by_arch.get(*a) {
                Some((f, n)) => format!("{n} ({f})"),
                None => "-".to_string(),
            })
            .collect();
        let _ = writeln!(w, "| {p} | {} |", cells.join(" | "));
    }

    let _ = write!(
        w,
        "
## Opcode forms per architecture

Static sites of every opcode with its modifiers (`-`: absent at that architecture).

| form | {} |
|---|{}
",
        archs.join(" | "),
        "---|".repeat(archs.len())
    );
    let all: BTreeSet<&String> = s.archs.values().flat_map(|a| a.forms.keys()).collect();
    for form in all {
        let cells: Vec<String> = s
            .archs
            .values()
            .map(|a| a.forms.get(form).map_or("-".to_string(), |n| n.to_string()))
            .collect();
        let _ = writeln!(w, "| {form} | {} |", cells.join(" | "));
    }
    o
}

/// The first line (1-based) where `a` and `b` differ, with both lines (`None` past the end).
fn first_difference<'a>(a: &'a str, b: &'a str) -> Option<(usize, Option<&'a str>, Option<&'a str>)> {
    let (mut la, mut lb) = (a.lines(), b.lines());
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (None, None) => return (a != b).then_some((n, None, None)),
            (x, y) if x != y => return Some((n, x, y)),
            _ => {}
        }
    }
}

#[test]
fn first_difference_names_the_line() {
    assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    assert_eq!(
        first_difference("a\nb\n", "a\nc\n"),
        Some((2, Some("b"), Some("c")))
    );
    assert_eq!(first_difference("a\n", "a\nb\n"), Some((2, None, Some("b"))));
    assert_eq!(first_difference("a\n", "a"), Some((2, None, None)));
}

#[test]
fn survey_matches_the_committed_listings() {
    let s = compute();
    // The walk found the suite (not an empty directory giving an empty survey).
    let listings: usize = s.archs.values().map(|a| a.listings).sum();
    let instructions: usize = s.archs.values().map(|a| a.instructions).sum();
    assert!(
        listings >= 80 && instructions >= 20_000,
        "{listings} listings, {instructions} instructions"
    );
    assert!(s.archs.contains_key("sm_75") && s.archs.contains_key("sm_90"));
    let text = render(&s);
    let path = root().join(SURVEY);
    if std::env::var_os("SASSIM_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).expect("writes the survey");
        eprintln!("rewrote {SURVEY} ({} lines)", text.lines().count());
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if let Some((n, old, new)) = first_difference(&committed, &text) {
        panic!(
            "{SURVEY} is stale: line {n} differs\n  committed: {}\n  generated: {}\n\
             Regenerate it with `{REGENERATE}` and commit it.",
            old.unwrap_or("<end of file>"),
            new.unwrap_or("<end of file>")
        );
    }
}

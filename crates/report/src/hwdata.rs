//! Hardware measurements as profilers write them, for `correlate` (docs/report.md,
//! "Hardware data"): the simple `kernel,launch_id,cycles` CSV (or a time column), Nsight
//! Compute CSV exports (raw and details pages), Nsight Systems `nsys stats` CSVs
//! (`cuda_gpu_trace` per launch, `cuda_gpu_kern_sum` per kernel), nvprof logs and CSVs
//! (metrics/events such as `elapsed_cycles_sm`, or `--print-gpu-trace` durations), and so
//! Accel-Sim's hardware statistics, which are these tools' CSVs (`util/hw_stats/run_hw.py`).
//!
//! Times become cycles at [`HwOptions::clock_mhz`]; nvprof's `elapsed_cycles_sm` (a sum
//! over the SMs) is divided by [`HwOptions::sms`]. Every error names the file and line.

use std::collections::BTreeMap;
use std::path::Path;

use crate::correlate::HwKernel;
use crate::csv::{self, Record};
use crate::ReportError;

/// Cycle metrics recognised in Nsight Compute exports, most preferred first.
pub const NCU_CYCLE_METRICS: [&str; 7] = [
    "gpu__cycles_elapsed.max",
    "gpc__cycles_elapsed.max",
    "gpc__cycles_elapsed.avg",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.max",
    "gpu__cycles_elapsed.avg",
    // Details page (SpeedOfLight section) display name of gpc__cycles_elapsed.max.
    "Elapsed Cycles",
];

/// Time metrics of Nsight Compute exports (turned into cycles at the clock).
pub const NCU_TIME_METRICS: [&str; 2] = ["gpu__time_duration.sum", "Duration"];

/// How to turn what a file holds into cycles.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HwOptions {
    /// Clock (MHz) at which times become cycles; a file of times needs it.
    pub clock_mhz: Option<f64>,
    /// SMs of the measured GPU, for per-SM sums (nvprof `elapsed_cycles_sm`).
    pub sms: Option<u32>,
}

/// The measurements of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct HwData {
    pub kernels: Vec<HwKernel>,
    /// The format recognised, e.g. `"nsys cuda_gpu_trace"`.
    pub format: &'static str,
    /// What the reader assumed (clock, SM count, averaged instances).
    pub notes: Vec<String>,
}

type ErrFn<'a> = dyn Fn(usize, String) -> ReportError + 'a;

/// Reads measured kernels from `path` (format detected from the header).
pub fn read_hw(path: impl AsRef<Path>, opts: &HwOptions) -> Result<HwData, ReportError> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ReportError::Io {
        path: shown.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        // Line of the first invalid byte.
        let good = e.as_bytes().get(..e.utf8_error().valid_up_to()).unwrap_or(&[]);
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        ReportError::Parse {
            path: shown.clone(),
            line,
            message: "not valid UTF-8".to_string(),
        }
    })?;
    parse_hw(&text, &shown, opts)
}

/// [`read_hw`] without a clock or SM count (cycle formats only).
pub fn read_hw_csv(path: impl AsRef<Path>) -> Result<Vec<HwKernel>, ReportError> {
    read_hw(path, &HwOptions::default()).map(|d| d.kernels)
}

/// [`parse_hw`] without a clock or SM count (cycle formats only).
pub fn parse_hw_csv(text: &str, source: &str) -> Result<Vec<HwKernel>, ReportError> {
    parse_hw(text, source, &HwOptions::default()).map(|d| d.kernels)
}

/// Parses measured kernels from `text`; `source` names the file in errors.
pub fn parse_hw(text: &str, source: &str, opts: &HwOptions) -> Result<HwData, ReportError> {
    let err = |line: usize, message: String| ReportError::Parse {
        path: source.to_string(),
        line,
        message,
    };
    // Blank out tool log lines (`==PROF== …`, `==1234== …`) and `#` comments, keeping
    // line numbers.
    let cleaned: String = text
        .split_inclusive('\n')
        .map(|l| {
            let t = l.trim_start_matches('\u{feff}').trim_start();
            if t.starts_with("==") || t.starts_with('#') {
                "\n"
            } else {
                l
            }
        })
        .collect();
    let records = csv::parse(&cleaned).map_err(|(line, m)| err(line, m))?;
    let Some((header, rows)) = records.split_first() else {
        return Err(err(
            1,
            "no header line (the file is empty or holds only log lines)".to_string(),
        ));
    };
    let cols = Columns::new(header);
    let r = Reader { opts, err: &err };
    if let (Some(kn), Some(mn), Some(mv)) = (
        cols.find(&["Kernel Name"]),
        cols.find(&["Metric Name"]),
        cols.find(&["Metric Value"]),
    ) {
        return r.ncu_long(rows, kn, mn, mv, cols.find(&["Metric Unit"]), cols.find(&["ID"]));
    }
    if let Some(kn) = cols.find(&["Kernel Name"]) {
        return r.ncu_wide(header, rows, &cols, kn);
    }
    if let (Some(name), Some(dur)) = (cols.find(&["Name"]), cols.find(&["Duration (ns)"])) {
        return r.nsys_trace(rows, name, dur);
    }
    if let (Some(name), Some(n)) = (cols.find(&["Name"]), cols.find(&["Instances"])) {
        let avg = cols
            .find(&["Avg (ns)", "Average (ns)", "Average"])
            .ok_or_else(|| {
                err(
                    header.line,
                    "an nsys kernel summary needs an `Avg (ns)` (or `Average`) column".to_string(),
                )
            })?;
        return r.nsys_sum(rows, name, n, avg);
    }
    if let (Some(k), Some(_)) = (cols.find(&["Kernel"]), cols.find(&["Device"])) {
        return r.nvprof_metrics(header, rows, &cols, k);
    }
    if let (Some(name), Some(dur)) = (cols.find(&["Name"]), cols.find(&["Duration"])) {
        return r.nvprof_trace(rows, name, dur);
    }
    let kernel = cols.find(&["kernel", "kernel_name", "name", "benchmark"]);
    if let Some(k) = kernel {
        let id = cols.find(&["launch_id", "launch_uid", "id"]);
        if let Some(c) = cols.find(&["cycles"]) {
            return r.simple(rows, k, id, Value::Cycles(c));
        }
        if let Some((c, scale)) = TIME_COLUMNS
            .iter()
            .find_map(|(n, s)| cols.find(&[n]).map(|c| (c, *s)))
        {
            return r.simple(rows, k, id, Value::Time(c, scale));
        }
    }
    Err(err(
        header.line,
        format!(
            "unrecognised header ({} columns): expected `kernel,launch_id,cycles` (or a time \
             column such as `nanoseconds`), an Nsight Compute CSV (`Kernel Name` and a cycle \
             or duration metric), an `nsys stats` CSV (`Name` with `Duration (ns)` or \
             `Instances`), or an nvprof CSV (`Kernel` or `Name` with `Duration`)",
            header.fields.len()
        ),
    ))
}

/// Time columns of the simple format and their scale to nanoseconds.
const TIME_COLUMNS: [(&str, f64); 8] = [
    ("nanoseconds", 1.0),
    ("ns", 1.0),
    ("time_ns", 1.0),
    ("duration_ns", 1.0),
    ("microseconds", 1e3),
    ("us", 1e3),
    ("time_us", 1e3),
    ("duration_us", 1e3),
];

/// Scale of a time unit to nanoseconds.
fn time_scale(u: &str) -> Option<f64> {
    match u.trim().to_ascii_lowercase().as_str() {
        "ns" | "nsecond" | "nseconds" | "nanoseconds" => Some(1.0),
        "us" | "usecond" | "useconds" | "microseconds" => Some(1e3),
        "ms" | "msecond" | "mseconds" | "milliseconds" => Some(1e6),
        "s" | "second" | "seconds" => Some(1e9),
        _ => None,
    }
}

/// Scale of an ncu cycle unit (`cycle`, `Kcycle`, `Mcycle`, `Gcycle`); empty = unscaled.
fn cycle_scale(u: &str) -> Option<f64> {
    match u.trim().to_ascii_lowercase().as_str() {
        "" | "cycle" | "cycles" => Some(1.0),
        "kcycle" | "kcycles" => Some(1e3),
        "mcycle" | "mcycles" => Some(1e6),
        "gcycle" | "gcycles" => Some(1e9),
        _ => None,
    }
}

/// Parses a non-negative number, allowing thousands separators (`,`, spaces, `'`).
pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim();
    let v = match t.parse::<f64>() {
        Ok(v) => v,
        Err(_) => {
            let cleaned: String = t
                .chars()
                .filter(|c| !matches!(c, ',' | ' ' | '\'' | '\u{a0}' | '\u{202f}'))
                .collect();
            if cleaned.is_empty() || !cleaned.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return None;
            }
            cleaned.parse::<f64>().ok()?
        }
    };
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// The header's column names.
struct Columns(Vec<String>);

impl Columns {
    fn new(header: &Record) -> Self {
        Columns(header.fields.iter().map(|f| f.trim().to_string()).collect())
    }
    fn find(&self, names: &[&str]) -> Option<usize> {
        self.0
            .iter()
            .position(|c| names.iter().any(|n| c.eq_ignore_ascii_case(n)))
    }
}

fn field<'a>(r: &'a Record, i: usize, what: &str) -> Result<&'a str, (usize, String)> {
    r.fields.get(i).map(|s| s.trim()).ok_or_else(|| {
        (
            r.line,
            format!(
                "missing {what} column: expected at least {} fields, found {}",
                i + 1,
                r.fields.len()
            ),
        )
    })
}

enum Value {
    Cycles(usize),
    /// Column and its scale to nanoseconds.
    Time(usize, f64),
}

struct Reader<'a> {
    opts: &'a HwOptions,
    err: &'a ErrFn<'a>,
}

impl Reader<'_> {
    fn e(&self) -> impl Fn((usize, String)) -> ReportError + '_ {
        |(l, m)| (self.err)(l, m)
    }

    /// The clock for times, or an error at `line`.
    fn clock(&self, line: usize) -> Result<f64, ReportError> {
        match self.opts.clock_mhz {
            Some(c) if c.is_finite() && c > 0.0 => Ok(c),
            _ => Err((self.err)(
                line,
                "the file holds times, not cycles: give the clock to convert them (--clock-mhz)".to_string(),
            )),
        }
    }

    fn clock_note(&self, notes: &mut Vec<String>, c: f64) {
        notes.push(format!("times converted to cycles at {c} MHz"));
    }

    fn number(&self, line: usize, what: &str, s: &str) -> Result<f64, ReportError> {
        parse_number(s).ok_or_else(|| (self.err)(line, format!("{what} {s:?} is not a non-negative number")))
    }

    fn push(out: &mut Vec<HwKernel>, name: &str, launch_id: Option<u32>, cycles: f64) {
        out.push(HwKernel {
            name: name.to_string(),
            launch_id,
            order: out.len(),
            cycles,
        });
    }

    fn simple(&self, rows: &[Record], k: usize, id: Option<usize>, v: Value) -> Result<HwData, ReportError> {
        let mut out = Vec::new();
        let mut notes = Vec::new();
        let clock = match v {
            Value::Time(..) => {
                let c = self.clock(rows.first().map_or(1, |r| r.line))?;
                self.clock_note(&mut notes, c);
                c
            }
            Value::Cycles(_) => 0.0,
        };
        for r in rows {
            let name = field(r, k, "kernel").map_err(self.e())?;
            let launch_id = match id {
                Some(i) => {
                    let s = field(r, i, "launch_id").map_err(self.e())?;
                    if s.is_empty() {
                        None
                    } else {
                        Some(s.parse::<u32>().map_err(|_| {
                            (self.err)(r.line, format!("launch_id {s:?} is not a non-negative integer"))
                        })?)
                    }
                }
                None => None,
            };
            if name.is_empty() && launch_id.is_none() {
                return Err((self.err)(
                    r.line,
                    "kernel has neither a name nor a launch_id".to_string(),
                ));
            }
            let cycles = match v {
                Value::Cycles(c) => {
                    let s = field(r, c, "cycles").map_err(self.e())?;
                    self.number(r.line, "cycles", s)?
                }
                Value::Time(c, scale) => {
                    let s = field(r, c, "time").map_err(self.e())?;
                    self.number(r.line, "time", s)? * scale * clock / 1000.0
                }
            };
            Self::push(&mut out, name, launch_id, cycles);
        }
        Ok(HwData {
            kernels: out,
            format: "simple CSV",
            notes,
        })
    }

    fn ncu_id(&self, s: &str, line: usize) -> Result<Option<u32>, ReportError> {
        let id = s
            .parse::<u32>()
            .map_err(|_| (self.err)(line, format!("ID {s:?} is not a non-negative integer")))?;
        Ok(id.checked_add(1))
    }

    fn ncu_wide(
        &self,
        header: &Record,
        rows: &[Record],
        cols: &Columns,
        kn: usize,
    ) -> Result<HwData, ReportError> {
        let cycle = NCU_CYCLE_METRICS.iter().find_map(|m| cols.find(&[m]));
        let time = NCU_TIME_METRICS.iter().find_map(|m| cols.find(&[m]));
        let (metric, is_time) = match (cycle, time) {
            (Some(c), _) => (c, false),
            (None, Some(t)) => (t, true),
            (None, None) => {
                return Err((self.err)(
                    header.line,
                    format!(
                        "Nsight Compute CSV without a cycle metric column (expected one of {}) \
                         or a duration ({})",
                        NCU_CYCLE_METRICS.join(", "),
                        NCU_TIME_METRICS.join(", ")
                    ),
                ))
            }
        };
        let id = cols.find(&["ID"]);
        let mut out = Vec::new();
        let mut notes = Vec::new();
        let mut scale = 1.0;
        let mut clock = 1.0;
        if is_time {
            clock = self.clock(header.line)?;
            self.clock_note(&mut notes, clock);
            scale = 1e3; // ncu reports durations in usecond unless the units row says
        }
        for (ri, r) in rows.iter().enumerate() {
            let value = field(r, metric, "metric").map_err(self.e())?;
            let id_s = match id {
                Some(i) => Some(field(r, i, "ID").map_err(self.e())?),
                None => None,
            };
            let name_s = field(r, kn, "Kernel Name").map_err(self.e())?;
            // The units row (`--page raw` prints it after the header): empty ID/name, unit text.
            if ri == 0 && name_s.is_empty() && !matches!(id_s, Some(s) if !s.is_empty()) {
                scale = if is_time {
                    time_scale(value)
                } else {
                    cycle_scale(value)
                }
                .ok_or_else(|| {
                    (self.err)(
                        r.line,
                        format!("metric unit {value:?} is not a cycle or time unit"),
                    )
                })?;
                continue;
            }
            let launch_id = match id_s {
                Some(s) => self.ncu_id(s, r.line)?,
                None => None,
            };
            let v = self.number(r.line, "metric value", value)?;
            let cycles = if is_time {
                v * scale * clock / 1000.0
            } else {
                v * scale
            };
            Self::push(&mut out, name_s, launch_id, cycles);
        }
        Ok(HwData {
            kernels: out,
            format: "Nsight Compute CSV (raw page)",
            notes,
        })
    }

    fn ncu_long(
        &self,
        rows: &[Record],
        kn: usize,
        mn: usize,
        mv: usize,
        unit: Option<usize>,
        id: Option<usize>,
    ) -> Result<HwData, ReportError> {
        // Kernels in order of first appearance: (first line, id, name, metric -> (line, value, unit)).
        struct K {
            line: usize,
            id: Option<u32>,
            name: String,
            metrics: BTreeMap<String, (usize, String, String)>,
        }
        let mut ks: Vec<K> = Vec::new();
        let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
        for r in rows {
            let name = field(r, kn, "Kernel Name").map_err(self.e())?;
            let id_s = match id {
                Some(i) => Some(field(r, i, "ID").map_err(self.e())?),
                None => None,
            };
            let launch_id = match id_s {
                Some(s) => self.ncu_id(s, r.line)?,
                None => None,
            };
            // Rows of one ID form one kernel; without an ID column, consecutive rows of the
            // same name do.
            let existing = match id_s {
                Some(s) => by_key.get(s).copied(),
                None => ks.last().filter(|k| k.name == name).map(|_| ks.len() - 1),
            };
            let idx = match existing {
                Some(i) => i,
                None => {
                    ks.push(K {
                        line: r.line,
                        id: launch_id,
                        name: name.to_string(),
                        metrics: BTreeMap::new(),
                    });
                    if let Some(s) = id_s {
                        by_key.insert(s.to_string(), ks.len() - 1);
                    }
                    ks.len() - 1
                }
            };
            let m = field(r, mn, "Metric Name").map_err(self.e())?;
            let v = field(r, mv, "Metric Value").map_err(self.e())?;
            let u = match unit {
                Some(i) => field(r, i, "Metric Unit").map_err(self.e())?,
                None => "",
            };
            ks[idx]
                .metrics
                .entry(m.to_string())
                .or_insert((r.line, v.to_string(), u.to_string()));
        }
        let mut out = Vec::new();
        let mut notes = Vec::new();
        for k in ks {
            let cycles = NCU_CYCLE_METRICS
                .iter()
                .find_map(|m| k.metrics.get(*m))
                .and_then(|(l, v, u)| cycle_scale(u).map(|s| (*l, v, s, None)));
            let time = || {
                NCU_TIME_METRICS
                    .iter()
                    .find_map(|m| k.metrics.get(*m))
                    .and_then(|(l, v, u)| time_scale(u).map(|s| (*l, v, s, Some(()))))
            };
            let Some((line, v, scale, is_time)) = cycles.or_else(time) else {
                return Err((self.err)(
                    k.line,
                    format!(
                        "kernel {:?} has no cycle metric (expected one of {} in cycles, or a \
                         duration)",
                        k.name,
                        NCU_CYCLE_METRICS.join(", ")
                    ),
                ));
            };
            let mut c = self.number(line, "metric value", v)? * scale;
            if is_time.is_some() {
                let clock = self.clock(line)?;
                if notes.is_empty() {
                    self.clock_note(&mut notes, clock);
                }
                c = c * clock / 1000.0;
            }
            Self::push(&mut out, &k.name, k.id, c);
        }
        Ok(HwData {
            kernels: out,
            format: "Nsight Compute CSV (details page)",
            notes,
        })
    }

    /// `nsys stats --report cuda_gpu_trace -f csv`: one row per GPU activity; memory
    /// copies and sets (no grid, `[CUDA mem…]` names) are left out.
    fn nsys_trace(&self, rows: &[Record], name: usize, dur: usize) -> Result<HwData, ReportError> {
        let clock = self.clock(rows.first().map_or(1, |r| r.line))?;
        let mut out = Vec::new();
        for r in rows {
            let n = field(r, name, "Name").map_err(self.e())?;
            if n.starts_with("[CUDA ") || n.is_empty() {
                continue;
            }
            let d = field(r, dur, "Duration (ns)").map_err(self.e())?;
            let ns = self.number(r.line, "duration", d)?;
            Self::push(&mut out, n, None, ns * clock / 1000.0);
        }
        let mut notes = Vec::new();
        self.clock_note(&mut notes, clock);
        Ok(HwData {
            kernels: out,
            format: "nsys stats cuda_gpu_trace",
            notes,
        })
    }

    /// `nsys stats --report cuda_gpu_kern_sum -f csv`: one row per kernel name with its
    /// instance count and average duration; each instance gets the average.
    fn nsys_sum(&self, rows: &[Record], name: usize, n: usize, avg: usize) -> Result<HwData, ReportError> {
        let clock = self.clock(rows.first().map_or(1, |r| r.line))?;
        let mut out = Vec::new();
        for r in rows {
            let k = field(r, name, "Name").map_err(self.e())?;
            let count_s = field(r, n, "Instances").map_err(self.e())?;
            let count = parse_number(count_s)
                .filter(|c| c.fract() == 0.0 && *c <= 1e7)
                .ok_or_else(|| {
                    (self.err)(
                        r.line,
                        format!("Instances {count_s:?} is not an integer up to 10^7"),
                    )
                })? as usize;
            let a = field(r, avg, "Avg (ns)").map_err(self.e())?;
            let cycles = self.number(r.line, "average duration", a)? * clock / 1000.0;
            for _ in 0..count {
                Self::push(&mut out, k, None, cycles);
            }
        }
        let mut notes = Vec::new();
        self.clock_note(&mut notes, clock);
        notes.push("a kernel summary gives each launch of a kernel its average duration".to_string());
        Ok(HwData {
            kernels: out,
            format: "nsys stats cuda_gpu_kern_sum",
            notes,
        })
    }

    /// nvprof `--csv` with `--metrics`/`--events` (one row per launch, column `Kernel`),
    /// e.g. Accel-Sim's `elapsed_cycles_sm` collection; a units row may follow the header.
    fn nvprof_metrics(
        &self,
        header: &Record,
        rows: &[Record],
        cols: &Columns,
        k: usize,
    ) -> Result<HwData, ReportError> {
        let mut notes = Vec::new();
        let (col, per_sm, is_time) = if let Some(c) = cols.find(&["elapsed_cycles_sm"]) {
            (c, true, false)
        } else if let Some(c) = cols.find(&["Duration"]) {
            (c, false, true)
        } else {
            return Err((self.err)(
                header.line,
                "nvprof CSV without `elapsed_cycles_sm` or `Duration` column".to_string(),
            ));
        };
        let sms = if per_sm {
            let s = self.opts.sms.filter(|&s| s > 0).ok_or_else(|| {
                (self.err)(
                    header.line,
                    "`elapsed_cycles_sm` is summed over the SMs: give the measured GPU's SM count (--hw-sms)"
                        .to_string(),
                )
            })?;
            notes.push(format!("elapsed_cycles_sm divided by {s} SMs"));
            s as f64
        } else {
            1.0
        };
        let clock = if is_time {
            let c = self.clock(header.line)?;
            self.clock_note(&mut notes, c);
            c
        } else {
            0.0
        };
        let mut scale = if is_time { 1e3 } else { 1.0 };
        let mut out = Vec::new();
        for (ri, r) in rows.iter().enumerate() {
            let name = field(r, k, "Kernel").map_err(self.e())?;
            let v = field(r, col, "cycle").map_err(self.e())?;
            if ri == 0 && name.is_empty() {
                // The units row.
                if is_time {
                    scale = time_scale(v)
                        .ok_or_else(|| (self.err)(r.line, format!("unit {v:?} is not a time unit")))?;
                }
                continue;
            }
            let x = self.number(r.line, "value", v)?;
            let cycles = if is_time {
                x * scale * clock / 1000.0
            } else {
                x / sms
            };
            Self::push(&mut out, name, None, cycles);
        }
        Ok(HwData {
            kernels: out,
            format: "nvprof CSV (metrics/events)",
            notes,
        })
    }

    /// nvprof `--print-gpu-trace --csv`: `Duration` per activity (unit in the units row,
    /// default microseconds), memory copies left out.
    fn nvprof_trace(&self, rows: &[Record], name: usize, dur: usize) -> Result<HwData, ReportError> {
        let clock = self.clock(rows.first().map_or(1, |r| r.line))?;
        let mut scale = 1e3;
        let mut out = Vec::new();
        for (ri, r) in rows.iter().enumerate() {
            let n = field(r, name, "Name").map_err(self.e())?;
            let d = field(r, dur, "Duration").map_err(self.e())?;
            if ri == 0 && n.is_empty() {
                scale = time_scale(d)
                    .ok_or_else(|| (self.err)(r.line, format!("unit {d:?} is not a time unit")))?;
                continue;
            }
            if n.starts_with("[CUDA ") {
                continue;
            }
            let x = self.number(r.line, "duration", d)?;
            Self::push(&mut out, n, None, x * scale * clock / 1000.0);
        }
        let mut notes = Vec::new();
        self.clock_note(&mut notes, clock);
        Ok(HwData {
            kernels: out,
            format: "nvprof CSV (GPU trace)",
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1,234,567"), Some(1234567.0));
        assert_eq!(parse_number("1 234.5"), Some(1234.5));
        assert_eq!(parse_number("12.5"), Some(12.5));
        assert_eq!(parse_number("n/a"), None);
        assert_eq!(parse_number("-3"), None);
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("NaN"), None);
    }

    #[test]
    fn units() {
        assert_eq!(time_scale("usecond"), Some(1e3));
        assert_eq!(time_scale("ms"), Some(1e6));
        assert_eq!(cycle_scale("Mcycle"), Some(1e6));
        assert_eq!(cycle_scale("byte"), None);
    }
}

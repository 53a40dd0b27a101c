//! Queries behind `sassim results`: list experiments, show runs, export (CSV, JSON), compare
//! configurations (per-input speed-up, geometric mean, table, Markdown, SVG).

use rusqlite::params;
use std::io::Write;

use crate::db::Db;
use crate::{Error, Result};

fn sql(e: rusqlite::Error) -> Error {
    Error::Db(e.to_string())
}

/// One experiment of `results list`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRow {
    pub name: String,
    pub description: String,
    pub configs: i64,
    pub inputs: i64,
    pub runs: i64,
    pub done: i64,
    pub failed: i64,
}

pub fn list(db: &Db) -> Result<Vec<ExperimentRow>> {
    let mut st = db
        .conn
        .prepare(
            "SELECT e.name, e.description,
               (SELECT COUNT(*) FROM experiment_configs c WHERE c.experiment = e.name),
               (SELECT COUNT(*) FROM experiment_inputs i WHERE i.experiment = e.name),
               (SELECT COUNT(*) FROM experiment_runs r WHERE r.experiment = e.name),
               (SELECT COUNT(*) FROM run_summary s WHERE s.experiment = e.name AND s.status = 'done'),
               (SELECT COUNT(*) FROM run_summary s WHERE s.experiment = e.name AND s.status = 'failed')
             FROM experiments e ORDER BY e.name",
        )
        .map_err(sql)?;
    let rows = st
        .query_map([], |r| {
            Ok(ExperimentRow {
                name: r.get(0)?,
                description: r.get(1)?,
                configs: r.get(2)?,
                inputs: r.get(3)?,
                runs: r.get(4)?,
                done: r.get(5)?,
                failed: r.get(6)?,
            })
        })
        .map_err(sql)?;
    rows.collect::<std::result::Result<_, _>>().map_err(sql)
}

/// One run of `results show`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub config: String,
    pub input: String,
    pub status: String,
    pub cycles: Option<i64>,
    pub warp_insts: Option<i64>,
    pub ipc: Option<f64>,
    pub error: Option<String>,
    pub run_key: String,
}

fn check_experiment(db: &Db, experiment: &str) -> Result<()> {
    let n: i64 = db
        .conn
        .query_row(
            "SELECT COUNT(*) FROM experiments WHERE name = ?1",
            [experiment],
            |r| r.get(0),
        )
        .map_err(sql)?;
    if n == 0 {
        let names: Vec<String> = list(db)?.into_iter().map(|e| e.name).collect();
        return Err(Error::Db(format!(
            "no experiment `{experiment}` in the database (it has: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    }
    Ok(())
}

/// Runs of an experiment in configuration, then input order.
pub fn runs(db: &Db, experiment: &str) -> Result<Vec<RunRow>> {
    check_experiment(db, experiment)?;
    let mut st = db
        .conn
        .prepare(
            "SELECT s.config, s.input, s.status, s.cycles, s.warp_insts, s.ipc, s.error, s.run_key
             FROM run_summary s
             JOIN experiment_configs c ON c.experiment = s.experiment AND c.label = s.config
             JOIN experiment_inputs i ON i.experiment = s.experiment AND i.label = s.input
             WHERE s.experiment = ?1 ORDER BY c.position, i.position",
        )
        .map_err(sql)?;
    let rows = st
        .query_map([experiment], |r| {
            Ok(RunRow {
                config: r.get(0)?,
                input: r.get(1)?,
                status: r.get(2)?,
                cycles: r.get(3)?,
                warp_insts: r.get(4)?,
                ipc: r.get(5)?,
                error: r.get(6)?,
                run_key: r.get(7)?,
            })
        })
        .map_err(sql)?;
    rows.collect::<std::result::Result<_, _>>().map_err(sql)
}

/// One statistic of a run: kernel (0 = total), kernel name, statistic, value as text.
pub type StatRow = (i64, String, String, String);

/// The statistics of one run (by key or unique key prefix), with its full key.
pub fn run_stats(db: &Db, key_prefix: &str) -> Result<(String, Vec<StatRow>)> {
    if key_prefix.len() < 4 || !key_prefix.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::Db(format!(
            "`{key_prefix}` is not a run key (4 or more hex digits)"
        )));
    }
    let mut st = db
        .conn
        .prepare("SELECT run_key FROM runs WHERE run_key LIKE ?1 || '%'")
        .map_err(sql)?;
    let keys: Vec<String> = st
        .query_map([key_prefix], |r| r.get(0))
        .map_err(sql)?
        .collect::<std::result::Result<_, _>>()
        .map_err(sql)?;
    let key = match keys.as_slice() {
        [k] => k.clone(),
        [] => return Err(Error::Db(format!("no run key starts with {key_prefix}"))),
        _ => {
            return Err(Error::Db(format!(
                "{} run keys start with {key_prefix}",
                keys.len()
            )))
        }
    };
    let mut st = db
        .conn
        .prepare(
            "SELECT s.kernel, COALESCE(k.name, 'total'), s.name, s.value FROM stats s
             LEFT JOIN kernels k ON k.run_key = s.run_key AND k.kernel = s.kernel
             WHERE s.run_key = ?1 ORDER BY s.kernel, s.name",
        )
        .map_err(sql)?;
    let rows = st
        .query_map([&key], |r| {
            let v: rusqlite::types::Value = r.get(3)?;
            let v = match v {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Real(f) => f.to_string(),
                rusqlite::types::Value::Text(t) => t,
                _ => String::new(),
            };
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, v))
        })
        .map_err(sql)?
        .collect::<std::result::Result<_, _>>()
        .map_err(sql)?;
    Ok((key, rows))
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Long CSV: one line per statistic of every run of the experiment
/// (`experiment,config,input,run_key,status,kernel,kernel_name,stat,value`); a run without
/// statistics (failed before writing any) has one line with empty `stat`.
pub fn export_csv(db: &Db, experiment: &str, w: &mut dyn Write) -> Result<()> {
    check_experiment(db, experiment)?;
    let e = |e: std::io::Error| Error::Db(format!("writing: {e}"));
    writeln!(
        w,
        "experiment,config,input,run_key,status,kernel,kernel_name,stat,value"
    )
    .map_err(e)?;
    let mut st = db
        .conn
        .prepare(
            "SELECT s.config, s.input, s.run_key, s.status, st.kernel, COALESCE(k.name, 'total'), st.name, st.value
             FROM run_summary s
             JOIN experiment_configs c ON c.experiment = s.experiment AND c.label = s.config
             JOIN experiment_inputs i ON i.experiment = s.experiment AND i.label = s.input
             LEFT JOIN stats st ON st.run_key = s.run_key
             LEFT JOIN kernels k ON k.run_key = st.run_key AND k.kernel = st.kernel
             WHERE s.experiment = ?1 ORDER BY c.position, i.position, st.kernel, st.name",
        )
        .map_err(sql)?;
    let mut rows = st.query(params![experiment]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let v: rusqlite::types::Value = r.get(7).map_err(sql)?;
        let v = match v {
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Real(f) => format!("{f}"),
            rusqlite::types::Value::Text(t) => t,
            _ => String::new(),
        };
        let kernel: Option<i64> = r.get(4).map_err(sql)?;
        let fields = [
            experiment.to_string(),
            r.get::<_, String>(0).map_err(sql)?,
            r.get::<_, String>(1).map_err(sql)?,
            r.get::<_, String>(2).map_err(sql)?,
            r.get::<_, String>(3).map_err(sql)?,
            kernel.map(|k| k.to_string()).unwrap_or_default(),
            if kernel.is_some() {
                r.get::<_, String>(5).map_err(sql)?
            } else {
                String::new()
            },
            r.get::<_, Option<String>>(6).map_err(sql)?.unwrap_or_default(),
            v,
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        writeln!(w, "{}", line.join(",")).map_err(e)?;
    }
    Ok(())
}

/// JSON: `{experiment, runs: [{config, input, run_key, status, error, cycles, ipc, report}]}`
/// with each run's full statistics report.
pub fn export_json(db: &Db, experiment: &str) -> Result<serde_json::Value> {
    let rows = runs(db, experiment)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let report: Option<String> = db
            .conn
            .query_row("SELECT report FROM runs WHERE run_key = ?1", [&r.run_key], |x| {
                x.get(0)
            })
            .unwrap_or(None);
        let report = report.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        out.push(serde_json::json!({
            "config": r.config, "input": r.input, "run_key": r.run_key, "status": r.status,
            "error": r.error, "cycles": r.cycles, "warp_insts": r.warp_insts, "ipc": r.ipc,
            "report": report,
        }));
    }
    Ok(serde_json::json!({ "experiment": experiment, "runs": out }))
}

/// Speed-ups of configurations over a base configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub experiment: String,
    pub base: String,
    pub configs: Vec<String>,
    pub inputs: Vec<String>,
    /// `speedup[config][input]` = base cycles / config cycles (None when either run is missing
    /// or failed).
    pub speedup: Vec<Vec<Option<f64>>>,
    /// Geometric mean over the inputs where the speed-up exists.
    pub geomean: Vec<Option<f64>>,
}

/// Geometric mean of the finite positive values (None if there are none).
pub fn geomean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0usize);
    for x in v {
        if x.is_finite() && x > 0.0 {
            s += x.ln();
            n += 1;
        }
    }
    (n > 0).then(|| (s / n as f64).exp())
}

/// Per-input speed-up of each configuration in `against` (all others when empty) over `base`
/// (the experiment's baseline, else its first configuration).
pub fn compare(db: &Db, experiment: &str, base: Option<&str>, against: &[String]) -> Result<Comparison> {
    let rows = runs(db, experiment)?;
    let mut configs: Vec<String> = Vec::new();
    let mut inputs: Vec<String> = Vec::new();
    for r in &rows {
        if !configs.contains(&r.config) {
            configs.push(r.config.clone());
        }
        if !inputs.contains(&r.input) {
            inputs.push(r.input.clone());
        }
    }
    let stored_base: Option<String> = db
        .conn
        .query_row(
            "SELECT baseline FROM experiments WHERE name = ?1",
            [experiment],
            |r| r.get(0),
        )
        .map_err(sql)?;
    let base = base
        .map(str::to_string)
        .or(stored_base)
        .or_else(|| configs.first().cloned())
        .ok_or_else(|| Error::Db(format!("experiment `{experiment}` has no configurations")))?;
    for c in std::iter::once(&base).chain(against) {
        if !configs.contains(c) {
            return Err(Error::Db(format!(
                "`{c}` is not a configuration of {experiment} (they are: {})",
                configs.join(", ")
            )));
        }
    }
    let chosen: Vec<String> = if against.is_empty() {
        configs.iter().filter(|c| **c != base).cloned().collect()
    } else {
        against.to_vec()
    };
    let cycles = |c: &str, i: &str| {
        rows.iter()
            .find(|r| r.config == c && r.input == i && r.status == "done")
            .and_then(|r| r.cycles)
            .filter(|&x| x > 0)
    };
    let mut speedup = Vec::new();
    let mut gm = Vec::new();
    for c in &chosen {
        let v: Vec<Option<f64>> = inputs
            .iter()
            .map(|i| match (cycles(&base, i), cycles(c, i)) {
                (Some(b), Some(x)) => Some(b as f64 / x as f64),
                _ => None,
            })
            .collect();
        gm.push(geomean(v.iter().flatten().copied()));
        speedup.push(v);
    }
    Ok(Comparison {
        experiment: experiment.to_string(),
        base,
        configs: chosen,
        inputs,
        speedup,
        geomean: gm,
    })
}

fn cell(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.3}"))
}

impl Comparison {
    /// Plain-text table: inputs down, configurations across, geometric mean last.
    pub fn table(&self) -> String {
        let w0 = self.inputs.iter().map(|s| s.len()).chain([7]).max().unwrap_or(7);
        let widths: Vec<usize> = self.configs.iter().map(|c| c.len().max(7)).collect();
        let mut s = format!(
            "speed-up over {} (cycles of {} / cycles of the configuration)\n",
            self.base, self.base
        );
        s.push_str(&format!("{:<w0$}", "input"));
        for (c, w) in self.configs.iter().zip(&widths) {
            s.push_str(&format!("  {c:>w$}"));
        }
        s.push('\n');
        for (ii, i) in self.inputs.iter().enumerate() {
            s.push_str(&format!("{i:<w0$}"));
            for (ci, w) in widths.iter().enumerate() {
                s.push_str(&format!("  {:>w$}", cell(self.speedup[ci][ii])));
            }
            s.push('\n');
        }
        s.push_str(&format!("{:<w0$}", "geomean"));
        for (ci, w) in widths.iter().enumerate() {
            s.push_str(&format!("  {:>w$}", cell(self.geomean[ci])));
        }
        s.push('\n');
        s
    }

    /// Markdown table with the same content.
    pub fn markdown(&self) -> String {
        let mut s = format!("| input | {} |\n|---|", self.configs.join(" | "));
        s.push_str(&"---:|".repeat(self.configs.len()));
        s.push('\n');
        for (ii, i) in self.inputs.iter().enumerate() {
            s.push_str(&format!("| {i} |"));
            for ci in 0..self.configs.len() {
                s.push_str(&format!(" {} |", cell(self.speedup[ci][ii])));
            }
            s.push('\n');
        }
        s.push_str("| **geomean** |");
        for g in &self.geomean {
            s.push_str(&format!(" **{}** |", cell(*g)));
        }
        s.push('\n');
        s
    }

    /// Grouped bar chart: inputs and the geometric mean, one bar per configuration.
    pub fn svg(&self) -> String {
        let mut categories = self.inputs.clone();
        categories.push("geomean".into());
        let values = self
            .speedup
            .iter()
            .zip(&self.geomean)
            .map(|(v, g)| v.iter().copied().chain([*g]).collect())
            .collect();
        sassim_report::bar_chart_svg(&sassim_report::BarChart {
            title: format!("{}: speed-up over {}", self.experiment, self.base),
            y_label: "speed-up".into(),
            categories,
            series: self.configs.clone(),
            values,
            reference: Some(1.0),
        })
    }
}

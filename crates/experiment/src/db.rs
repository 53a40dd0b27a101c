//! The results database: one SQLite file, readable by any SQL client or pandas
//! (`pd.read_sql("SELECT * FROM run_summary", sqlite3.connect("results.db"))`).
//! The schema is in [`SCHEMA`] and documented in `docs/experiments.md`.

use rusqlite::{params, Connection, OptionalExtension};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::exec::{Outcome, Status};
use crate::hash::sha256_hex;
use crate::plan::Plan;
use crate::{Error, Result};

/// Version of [`SCHEMA`], kept in `meta`.
pub const SCHEMA_VERSION: i64 = 1;

/// Tables and views. `executions` holds host facts (wall time, host, engine) and is the only
/// table whose contents depend on where and when runs executed.
pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS experiments (
  name TEXT PRIMARY KEY, description TEXT NOT NULL, file TEXT NOT NULL, spec TEXT NOT NULL,
  sim_version TEXT NOT NULL, baseline TEXT);
CREATE TABLE IF NOT EXISTS configurations (
  config_id TEXT PRIMARY KEY, gpu TEXT NOT NULL, overrides TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inputs (
  input_id TEXT PRIMARY KEY, kind TEXT NOT NULL, location TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS experiment_configs (
  experiment TEXT NOT NULL, label TEXT NOT NULL, config_id TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (experiment, label));
CREATE TABLE IF NOT EXISTS experiment_inputs (
  experiment TEXT NOT NULL, label TEXT NOT NULL, input_id TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (experiment, label));
CREATE TABLE IF NOT EXISTS experiment_runs (
  experiment TEXT NOT NULL, run_key TEXT NOT NULL, config_label TEXT NOT NULL,
  input_label TEXT NOT NULL, PRIMARY KEY (experiment, run_key));
CREATE TABLE IF NOT EXISTS runs (
  run_key TEXT PRIMARY KEY, config_id TEXT NOT NULL, input_id TEXT NOT NULL,
  sim_version TEXT NOT NULL, status TEXT NOT NULL, error TEXT, exit_code INTEGER,
  resolved_id TEXT, cycles INTEGER, warp_insts INTEGER, ipc REAL, report TEXT);
CREATE TABLE IF NOT EXISTS resolved_configs (resolved_id TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS config_values (
  resolved_id TEXT NOT NULL, key TEXT NOT NULL, value, PRIMARY KEY (resolved_id, key));
CREATE TABLE IF NOT EXISTS kernels (
  run_key TEXT NOT NULL, kernel INTEGER NOT NULL, name TEXT NOT NULL, mode TEXT,
  cycles INTEGER, warp_insts INTEGER, ipc REAL, PRIMARY KEY (run_key, kernel));
CREATE TABLE IF NOT EXISTS stats (
  run_key TEXT NOT NULL, kernel INTEGER NOT NULL, name TEXT NOT NULL, value,
  PRIMARY KEY (run_key, kernel, name));
CREATE TABLE IF NOT EXISTS executions (
  run_key TEXT PRIMARY KEY, engine TEXT NOT NULL, host TEXT NOT NULL, wall_seconds REAL,
  finished_at INTEGER);
CREATE VIEW IF NOT EXISTS run_summary AS
  SELECT er.experiment, er.config_label AS config, er.input_label AS input, c.gpu, c.overrides,
         COALESCE(r.status, 'pending') AS status, r.cycles, r.warp_insts, r.ipc, r.error,
         er.run_key, r.sim_version
  FROM experiment_runs er
  LEFT JOIN runs r ON r.run_key = er.run_key
  LEFT JOIN experiment_configs ec ON ec.experiment = er.experiment AND ec.label = er.config_label
  LEFT JOIN configurations c ON c.config_id = ec.config_id;
CREATE VIEW IF NOT EXISTS run_stats AS
  SELECT er.experiment, er.config_label AS config, er.input_label AS input, s.kernel,
         k.name AS kernel_name, s.name, s.value, s.run_key
  FROM experiment_runs er
  JOIN stats s ON s.run_key = er.run_key
  LEFT JOIN kernels k ON k.run_key = s.run_key AND k.kernel = s.kernel;
"#;

/// Tables whose contents are the results proper (everything but `executions`), in the order
/// [`Db::dump`] lists them.
pub const RESULT_TABLES: &[&str] = &[
    "meta",
    "experiments",
    "configurations",
    "inputs",
    "experiment_configs",
    "experiment_inputs",
    "experiment_runs",
    "runs",
    "resolved_configs",
    "config_values",
    "kernels",
    "stats",
];

/// An open results database.
pub struct Db {
    pub conn: Connection,
}

fn sql(e: rusqlite::Error) -> Error {
    Error::Db(e.to_string())
}

/// Numeric leaves of a JSON value as `(dotted.name, value)`; strings and nulls are skipped.
pub fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
    let name = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                flatten(&name(k), x, out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&name(&i.to_string()), x, out);
            }
        }
        serde_json::Value::Number(_) => out.push((prefix.to_string(), v.clone())),
        serde_json::Value::Bool(b) => out.push((prefix.to_string(), serde_json::Value::from(*b as u8))),
        _ => {}
    }
}

fn sql_value(v: &serde_json::Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => V::Integer(i),
            None => V::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::Bool(b) => V::Integer(*b as i64),
        serde_json::Value::String(s) => V::Text(s.clone()),
        serde_json::Value::Null => V::Null,
        other => V::Text(other.to_string()),
    }
}

impl Db {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Db> {
        let conn = Connection::open(path).map_err(|e| Error::Db(format!("{}: {e}", path.display())))?;
        conn.busy_timeout(std::time::Duration::from_secs(60))
            .map_err(sql)?;
        conn.execute_batch(SCHEMA)
            .map_err(|e| Error::Db(format!("{}: {e}", path.display())))?;
        let v: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql)?;
        match v {
            None => {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [SCHEMA_VERSION.to_string()],
                )
                .map_err(sql)?;
            }
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            Some(v) => {
                return Err(Error::Db(format!(
                    "{}: schema version {v}, this sassim reads {SCHEMA_VERSION}",
                    path.display()
                )))
            }
        }
        Ok(Db { conn })
    }

    /// Records the experiment, its configurations, inputs and run membership (replacing the
    /// previous membership of the same experiment). Results already stored stay.
    pub fn record_plan(&mut self, plan: &Plan) -> Result<()> {
        let e = &plan.experiment;
        let tx = self.conn.transaction().map_err(sql)?;
        tx.execute(
            "INSERT OR REPLACE INTO experiments (name, description, file, spec, sim_version, baseline)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                e.name,
                e.description,
                e.file.display().to_string(),
                e.text,
                plan.sim_version,
                e.baseline
            ],
        )
        .map_err(sql)?;
        for t in ["experiment_configs", "experiment_inputs", "experiment_runs"] {
            tx.execute(&format!("DELETE FROM {t} WHERE experiment = ?1"), [&e.name])
                .map_err(sql)?;
        }
        for (i, c) in e.configs.iter().enumerate() {
            let ov = serde_json::to_string(&c.overrides).unwrap_or_default();
            tx.execute(
                "INSERT OR IGNORE INTO configurations (config_id, gpu, overrides) VALUES (?1, ?2, ?3)",
                params![plan.config_ids[i], c.gpu, ov],
            )
            .map_err(sql)?;
            tx.execute(
                "INSERT INTO experiment_configs (experiment, label, config_id, position) VALUES (?1, ?2, ?3, ?4)",
                params![e.name, c.label, plan.config_ids[i], i as i64],
            )
            .map_err(sql)?;
        }
        for (i, inp) in e.inputs.iter().enumerate() {
            tx.execute(
                "INSERT OR IGNORE INTO inputs (input_id, kind, location) VALUES (?1, ?2, ?3)",
                params![plan.input_ids[i], inp.kind.kind_name(), inp.kind.location()],
            )
            .map_err(sql)?;
            tx.execute(
                "INSERT INTO experiment_inputs (experiment, label, input_id, position) VALUES (?1, ?2, ?3, ?4)",
                params![e.name, inp.label, plan.input_ids[i], i as i64],
            )
            .map_err(sql)?;
        }
        for r in &plan.runs {
            tx.execute(
                "INSERT OR IGNORE INTO experiment_runs (experiment, run_key, config_label, input_label)
                 VALUES (?1, ?2, ?3, ?4)",
                params![e.name, r.key, e.configs[r.config].label, e.inputs[r.input].label],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// Keys of stored runs with the given status.
    pub fn keys_with_status(&self, status: Status) -> Result<HashSet<String>> {
        let mut st = self
            .conn
            .prepare("SELECT run_key FROM runs WHERE status = ?1")
            .map_err(sql)?;
        let rows = st
            .query_map([status.as_str()], |r| r.get::<_, String>(0))
            .map_err(sql)?;
        rows.collect::<std::result::Result<_, _>>().map_err(sql)
    }

    /// Stores one run's outcome (replacing an earlier result of the same key) in one
    /// transaction: the run, its kernels, every statistic, its resolved configuration.
    pub fn store(&mut self, plan: &Plan, outcome: &Outcome, engine: &str) -> Result<()> {
        let run = plan
            .runs
            .iter()
            .find(|r| r.key == outcome.key)
            .ok_or_else(|| Error::Db(format!("run {} is not part of the plan", outcome.key)))?;
        let tx = self.conn.transaction().map_err(sql)?;
        for t in ["kernels", "stats"] {
            tx.execute(&format!("DELETE FROM {t} WHERE run_key = ?1"), [&outcome.key])
                .map_err(sql)?;
        }
        let mut report = outcome.report.clone();
        let mut resolved_id: Option<String> = None;
        let (mut cycles, mut insts, mut ipc) = (None, None, None);
        if let Some(serde_json::Value::Object(m)) = report.as_mut() {
            if let Some(cfg) = m.remove("config") {
                let text = cfg.to_string();
                let id = sha256_hex(text.as_bytes())[..16].to_string();
                let new = tx
                    .execute(
                        "INSERT OR IGNORE INTO resolved_configs (resolved_id, json) VALUES (?1, ?2)",
                        params![id, text],
                    )
                    .map_err(sql)?;
                if new > 0 {
                    let mut vals = Vec::new();
                    flatten_all("", &cfg, &mut vals);
                    for (k, v) in vals {
                        tx.execute(
                            "INSERT OR REPLACE INTO config_values (resolved_id, key, value) VALUES (?1, ?2, ?3)",
                            params![id, k, sql_value(&v)],
                        )
                        .map_err(sql)?;
                    }
                }
                resolved_id = Some(id);
            }
            if let Some(t) = m.get("total") {
                cycles = t.get("cycles").and_then(|v| v.as_i64());
                insts = t.get("warp_insts").and_then(|v| v.as_i64());
                ipc = t.get("ipc").and_then(|v| v.as_f64());
                let mut vals = Vec::new();
                flatten("", t, &mut vals);
                insert_stats(&tx, &outcome.key, 0, &vals)?;
            }
            if let Some(serde_json::Value::Array(ks)) = m.get("kernels") {
                for (i, k) in ks.iter().enumerate() {
                    let kid = i as i64 + 1;
                    let name = k.get("name").and_then(|v| v.as_str()).unwrap_or("");
                    tx.execute(
                        "INSERT INTO kernels (run_key, kernel, name, mode, cycles, warp_insts, ipc)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        params![
                            outcome.key,
                            kid,
                            name,
                            k.get("mode").and_then(|v| v.as_str()),
                            k.get("cycles").and_then(|v| v.as_i64()),
                            k.get("warp_insts").and_then(|v| v.as_i64()),
                            k.get("ipc").and_then(|v| v.as_f64())
                        ],
                    )
                    .map_err(sql)?;
                    let mut vals = Vec::new();
                    if let serde_json::Value::Object(km) = k {
                        for (f, x) in km {
                            // The IPC time series stays in the report JSON.
                            if f != "ipc_timeline" {
                                flatten(f, x, &mut vals);
                            }
                        }
                    }
                    insert_stats(&tx, &outcome.key, kid, &vals)?;
                }
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO runs (run_key, config_id, input_id, sim_version, status, error,
               exit_code, resolved_id, cycles, warp_insts, ipc, report)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                outcome.key,
                plan.config_ids[run.config],
                plan.input_ids[run.input],
                plan.sim_version,
                outcome.status.as_str(),
                outcome.error,
                outcome.exit_code,
                resolved_id,
                cycles,
                insts,
                ipc,
                report.map(|r| r.to_string())
            ],
        )
        .map_err(sql)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        tx.execute(
            "INSERT OR REPLACE INTO executions (run_key, engine, host, wall_seconds, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![outcome.key, engine, outcome.host, outcome.wall_seconds, now],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Every row of the result tables (not `executions`), sorted, as text: two databases hold
    /// the same results exactly when their dumps are equal.
    pub fn dump(&self) -> Result<BTreeMap<String, Vec<String>>> {
        let mut out = BTreeMap::new();
        for t in RESULT_TABLES {
            let mut st = self.conn.prepare(&format!("SELECT * FROM {t}")).map_err(sql)?;
            let n = st.column_count();
            let mut rows: Vec<String> = st
                .query_map([], |r| {
                    let mut cols = Vec::with_capacity(n);
                    for i in 0..n {
                        let v: rusqlite::types::Value = r.get(i)?;
                        cols.push(format!("{v:?}"));
                    }
                    Ok(cols.join("|"))
                })
                .map_err(sql)?
                .collect::<std::result::Result<_, _>>()
                .map_err(sql)?;
            rows.sort();
            out.insert(t.to_string(), rows);
        }
        Ok(out)
    }
}

/// Like [`flatten`] but keeps strings (configuration values such as `issue.scheduler`).
fn flatten_all(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
    let name = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                flatten_all(&name(k), x, out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten_all(&name(&i.to_string()), x, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

fn insert_stats(
    tx: &rusqlite::Transaction,
    key: &str,
    kernel: i64,
    vals: &[(String, serde_json::Value)],
) -> Result<()> {
    let mut st = tx
        .prepare_cached("INSERT OR REPLACE INTO stats (run_key, kernel, name, value) VALUES (?1, ?2, ?3, ?4)")
        .map_err(sql)?;
    for (k, v) in vals {
        st.execute(params![key, kernel, k, sql_value(v)]).map_err(sql)?;
    }
    Ok(())
}

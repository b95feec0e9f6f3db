//! The GPU telemetry summaries benchmark tools write beside a cell's
//! figures: AIPerf's `telemetry_data` (DCGM, per exporter and GPU) and
//! GenAI-Perf's `telemetry_stats` (per metric and GPU index). Each GPU's
//! summaries over the profile become the cell's [`GpuTelemetry`], summed over
//! the GPUs the server ran on; what no file states is left out, and how the
//! GPUs were chosen is said in the cell's definitions.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::At;
use crate::model::{EnergySource, GpuTelemetry, Throttle};

/// One GPU's metrics as a tool summarised them over its profile.
pub(crate) struct GpuSummary {
    /// The exporter it was read from, when the tool names one.
    pub endpoint: Option<String>,
    pub index: u32,
    pub uuid: Option<String>,
    pub name: Option<String>,
    /// Metric name → (unit, avg, min, max).
    metrics: BTreeMap<String, Stat>,
}

#[derive(Clone, Copy)]
struct Stat {
    avg: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
}

impl GpuSummary {
    fn stat(&self, names: &[&str]) -> Option<Stat> {
        names.iter().find_map(|n| self.metrics.get(*n).copied())
    }

    fn avg(&self, names: &[&str]) -> Option<f64> {
        self.stat(names)?.avg
    }

    /// Whether the GPU did any work during the profile.
    fn busy(&self) -> Option<bool> {
        Some(self.avg(&["gpu_utilization"])? > 0.0)
    }

    fn label(&self) -> String {
        format!("GPU {}", self.index)
    }
}

/// The metric names of the figures sitegen keeps, AIPerf's first.
const POWER: &[&str] = &["gpu_power_usage"];
const POWER_LIMIT: &[&str] = &["power_management_limit"];
const SM_CLOCK: &[&str] = &["sm_clock_frequency", "gpu_clock_sm"];
const MEM_CLOCK: &[&str] = &["memory_clock_frequency", "gpu_clock_memory"];
const TEMPERATURE: &[&str] = &["gpu_temperature"];
const UTILISATION: &[&str] = &["gpu_utilization"];
const MEMORY_USED: &[&str] = &["gpu_memory_used"];
const MEMORY_FREE: &[&str] = &["gpu_memory_free"];
const MEMORY_TOTAL: &[&str] = &["gpu_memory_total"];
/// DCGM's counters of time spent slowed (µs), growing while it happens.
const POWER_VIOLATION: &[&str] = &["power_violation"];
const THERMAL_VIOLATION: &[&str] = &["thermal_violation"];

/// The units each kept metric may have (as the tools write them); a
/// summary in another is left out and said.
fn expected_units(metric: &str) -> Option<&'static [&'static str]> {
    let of = |names: &[&str]| names.contains(&metric);
    if of(POWER) || of(POWER_LIMIT) {
        Some(&["W"])
    } else if of(SM_CLOCK) || of(MEM_CLOCK) {
        Some(&["MHz"])
    } else if of(TEMPERATURE) {
        Some(&["C", "°C"])
    } else if of(UTILISATION) {
        Some(&["%"])
    } else if of(POWER_VIOLATION) || of(THERMAL_VIOLATION) {
        Some(&["us", "µs"])
    } else {
        None
    }
}

fn stat_of(at: &At) -> anyhow::Result<Stat> {
    Ok(Stat {
        avg: at.opt_f64("avg")?,
        min: at.opt_f64("min")?,
        max: at.opt_f64("max")?,
    })
}

/// A child whose key may hold dots (an exporter's host name).
fn under<'a>(at: &At<'a>, key: &'a str, value: &'a Value) -> At<'a> {
    At {
        file: at.file,
        path: if at.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", at.path)
        },
        value,
    }
}

/// Keeps a metric's summary when its unit is the one sitegen reads it in.
fn keep(
    metrics: &mut BTreeMap<String, Stat>,
    warnings: &mut Vec<String>,
    at: &At,
    name: &str,
    unit: Option<&str>,
) -> anyhow::Result<()> {
    let Some(expected) = expected_units(name) else {
        // Not a figure sitegen keeps; it stays in the raw record.
        if name == "energy_consumption"
            || MEMORY_USED.contains(&name)
            || MEMORY_FREE.contains(&name)
            || MEMORY_TOTAL.contains(&name)
        {
            metrics.insert(name.to_string(), stat_of(at)?);
        }
        return Ok(());
    };
    match unit {
        Some(u) if expected.contains(&u) => {
            metrics.insert(name.to_string(), stat_of(at)?);
        }
        other => {
            // Once per metric and unit, not once per GPU.
            let said = format!(
                "{name}: unit {}: expected {}: left out",
                other.unwrap_or("absent"),
                crate::model::format::or_list(expected)
            );
            if !warnings.contains(&said) {
                warnings.push(said);
            }
        }
    }
    Ok(())
}

/// AIPerf's `telemetry_data.endpoints.<exporter>.gpus.<gpu_k>`, each GPU's
/// metrics as `{unit, avg, min, max, ...}`.
pub(crate) fn aiperf(
    root: &At,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Option<Vec<GpuSummary>>> {
    let Some(endpoints) = root.child("telemetry_data.endpoints") else {
        return Ok(None);
    };
    let mut gpus = Vec::new();
    for (endpoint, e) in endpoints.value.as_object().into_iter().flatten() {
        let e = under(&endpoints, endpoint, e);
        let Some(listed) = e.child("gpus") else {
            continue;
        };
        for (key, g) in listed.value.as_object().into_iter().flatten() {
            let g = under(&listed, key, g);
            let index = match g.opt_u64("gpu_index")? {
                Some(i) => u32::try_from(i).map_err(|_| g.error("gpu_index: too large"))?,
                None => return Err(g.error("expected the GPU's gpu_index, found none")),
            };
            let mut metrics = BTreeMap::new();
            if let Some(m) = g.child("metrics") {
                for (name, v) in m.value.as_object().into_iter().flatten() {
                    let at = under(&m, name, v);
                    keep(&mut metrics, warnings, &at, name, at.str_at("unit"))?;
                }
            }
            gpus.push(GpuSummary {
                endpoint: Some(endpoint.clone()),
                index,
                uuid: g.str_at("gpu_uuid").map(str::to_string),
                name: g.str_at("gpu_name").map(str::to_string),
                metrics,
            });
        }
    }
    Ok(Some(gpus))
}

/// GenAI-Perf's `telemetry_stats.<metric>.<gpu index>`, the unit beside the
/// GPUs under `unit`.
pub(crate) fn genai_perf(
    root: &At,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Option<Vec<GpuSummary>>> {
    let Some(stats) = root.child("telemetry_stats") else {
        return Ok(None);
    };
    let mut by_index: BTreeMap<u32, BTreeMap<String, Stat>> = BTreeMap::new();
    for (name, per_gpu) in stats.value.as_object().into_iter().flatten() {
        let m = under(&stats, name, per_gpu);
        let unit = m.str_at("unit");
        for (key, v) in per_gpu.as_object().into_iter().flatten() {
            if key == "unit" {
                continue;
            }
            let at = under(&m, key, v);
            let index: u32 = key
                .parse()
                .map_err(|_| at.error("expected a GPU index as the key"))?;
            keep(
                by_index.entry(index).or_default(),
                warnings,
                &at,
                name,
                unit,
            )?;
        }
    }
    Ok(Some(
        by_index
            .into_iter()
            .map(|(index, metrics)| GpuSummary {
                endpoint: None,
                index,
                uuid: None,
                name: None,
                metrics,
            })
            .collect(),
    ))
}

/// The GPUs of a summary the server ran on, and how they were chosen.
pub(crate) struct Chosen<'a> {
    pub gpus: Vec<&'a GpuSummary>,
    /// "GPU 3, the 1 of 8 listed that was busy (gpu_utilization above 0)".
    pub how: String,
}

/// Which listed GPUs are the run's: those `--gpu-index` names; else all of
/// them when they are as many as the run's GPUs; else the busy ones when
/// exactly that many were. `Err` says why the telemetry cannot be used.
/// A GPU two exporters both report (one UUID and index) counts once.
pub(crate) fn choose<'a>(
    listed: &'a [GpuSummary],
    gpu_index: Option<&[u32]>,
    gpu_count: Option<u32>,
) -> Result<Chosen<'a>, String> {
    let mut gpus: Vec<&GpuSummary> = Vec::new();
    for g in listed {
        let twin = gpus
            .iter()
            .any(|k| k.index == g.index && k.uuid.is_some() && k.uuid == g.uuid);
        if !twin {
            gpus.push(g);
        }
    }
    let twins = listed.len() - gpus.len();
    let also = if twins > 0 {
        format!(
            "; {} reported twice, by two exporters, counted once",
            crate::model::format::counted(twins, "GPU")
        )
    } else {
        String::new()
    };
    let labels = |gs: &[&GpuSummary]| {
        let l: Vec<String> = gs.iter().map(|g| g.label()).collect();
        crate::model::format::and_list(&l)
    };
    if gpus.is_empty() {
        return Err("it lists no GPU".into());
    }
    if let Some(wanted) = gpu_index {
        let mut chosen = Vec::new();
        for &i in wanted {
            let matches: Vec<&GpuSummary> = gpus.iter().copied().filter(|g| g.index == i).collect();
            match matches.as_slice() {
                [one] => chosen.push(*one),
                [] => {
                    return Err(format!(
                        "--gpu-index names GPU {i}, which it does not list (it lists {})",
                        labels(&gpus)
                    ));
                }
                _ => {
                    return Err(format!(
                        "--gpu-index {i} names a GPU on each of {} exporters",
                        matches.len()
                    ));
                }
            }
        }
        return Ok(Chosen {
            how: format!("{}, as --gpu-index names{also}", labels(&chosen)),
            gpus: chosen,
        });
    }
    let n = gpus.len();
    let Some(count) = gpu_count else {
        return Err(format!(
            "it lists {} and the run's GPU count is not given, so which served the run is unknown: give --gpu-count, or --gpu-index",
            crate::model::format::counted(n, "GPU")
        ));
    };
    if n == count as usize {
        return Ok(Chosen {
            how: format!("{}: every GPU listed{also}", labels(&gpus)),
            gpus,
        });
    }
    let busy: Vec<&GpuSummary> = gpus
        .iter()
        .copied()
        .filter(|g| g.busy() == Some(true))
        .collect();
    if busy.len() == count as usize {
        return Ok(Chosen {
            how: format!(
                "{}, the {} of {n} listed that {} busy (gpu_utilization above 0){also}",
                labels(&busy),
                busy.len(),
                if busy.len() == 1 { "was" } else { "were" }
            ),
            gpus: busy,
        });
    }
    Err(format!(
        "it lists {n} GPUs, {} of them busy, and does not say which {count} served the run: give --gpu-index",
        busy.len()
    ))
}

/// The cell's GPU telemetry from the chosen GPUs' summaries over a profile
/// of `duration_s` that made `total_tok_per_s`, with the definitions of its
/// figures (by CSV column).
pub(crate) fn telemetry(
    chosen: &Chosen,
    source: &str,
    total_tok_per_s: Option<f64>,
    duration_s: f64,
) -> (GpuTelemetry, BTreeMap<String, String>) {
    let gpus = &chosen.gpus;
    let sum =
        |names: &[&str]| -> Option<f64> { gpus.iter().map(|g| g.avg(names)).sum::<Option<f64>>() };
    let mean = |names: &[&str]| sum(names).map(|s| s / gpus.len() as f64);
    let power = sum(POWER);
    let energy = power.map(|w| w * duration_s);
    let joules_per_output_token = power
        .zip(total_tok_per_s.filter(|t| *t > 0.0))
        .map(|(w, t)| w / t);
    // The counters of time slowed grew during the profile: the worst wins.
    let grew = |names: &[&str]| -> Option<bool> {
        gpus.iter()
            .map(|g| {
                let s = g.stat(names)?;
                Some(s.max? > s.min?)
            })
            .try_fold(false, |any, g| g.map(|g| any || g))
    };
    let throttle = match (grew(THERMAL_VIOLATION), grew(POWER_VIOLATION)) {
        (Some(true), _) => Some(Throttle::Thermal),
        (_, Some(true)) => Some(Throttle::PowerCapped),
        (Some(false), Some(false)) => Some(Throttle::Ok),
        _ => None,
    };
    let memory_used_pct_max = gpus
        .iter()
        .map(|g| {
            let used = g.stat(MEMORY_USED)?;
            let total = g
                .avg(MEMORY_TOTAL)
                .or_else(|| Some(used.avg? + g.avg(MEMORY_FREE)?))
                .filter(|t| *t > 0.0)?;
            Some(used.max? / total * 100.0)
        })
        .try_fold(f64::NEG_INFINITY, |m, v| v.map(|v| m.max(v)))
        .filter(|m| m.is_finite());
    // The model, when the tool names it and every GPU chosen is one.
    let mut names: Vec<&str> = gpus.iter().filter_map(|g| g.name.as_deref()).collect();
    names.dedup();
    let model = match names.as_slice() {
        [one] if gpus.iter().all(|g| g.name.is_some()) => format!(" of {one} GPUs"),
        _ => String::new(),
    };
    let t = GpuTelemetry {
        source: format!("{source}{model}: {}", chosen.how),
        gpus: gpus.len() as u32,
        samples: None,
        power_w_mean: power,
        // The summed power's peak is not the sum of each GPU's peaks.
        power_w_max: None,
        power_limit_w: sum(POWER_LIMIT),
        energy_j: energy,
        energy_from: energy.map(|_| EnergySource::MeanPower),
        joules_per_output_token,
        sm_clock_mhz_mean: mean(SM_CLOCK),
        mem_clock_mhz_mean: mean(MEM_CLOCK),
        temp_c_max: gpus
            .iter()
            .map(|g| g.stat(TEMPERATURE)?.max)
            .try_fold(f64::NEG_INFINITY, |m, v| v.map(|v| m.max(v)))
            .filter(|m| m.is_finite()),
        util_pct_mean: mean(UTILISATION),
        memory_used_pct_max,
        throttle,
    };
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "gpu_power_w".to_string(),
        "the mean of each GPU's power draw (DCGM's gpu_power_usage, averaged over the tool's \
         telemetry of the profile), summed over the server's GPUs"
            .to_string(),
    );
    definitions.insert(
        "joules_per_output_token".to_string(),
        "that mean power / total tok/s (the tool's mean power × the benchmark's duration, over \
         its output tokens); its energy_consumption counter spans the telemetry's own \
         collection, which need not be the benchmark's window, and stays in the raw record"
            .to_string(),
    );
    if throttle.is_some() {
        definitions.insert(
            "throttle".to_string(),
            "thermal where DCGM's thermal_violation counter grew during the profile, power \
             capped where its power_violation counter did, else ok"
                .to_string(),
        );
    }
    (t, definitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, uuid: Option<&str>, util: f64, power: f64) -> GpuSummary {
        let stat = |v: f64| Stat {
            avg: Some(v),
            min: Some(v),
            max: Some(v),
        };
        GpuSummary {
            endpoint: None,
            index,
            uuid: uuid.map(str::to_string),
            name: None,
            metrics: [
                ("gpu_utilization".to_string(), stat(util)),
                ("gpu_power_usage".to_string(), stat(power)),
            ]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn the_run_s_gpus_are_named_counted_or_the_busy_ones_else_refused() {
        let eight: Vec<GpuSummary> = (0..8)
            .map(|i| gpu(i, None, if i == 3 { 77.0 } else { 0.0 }, 60.0))
            .collect();
        let c = choose(&eight, None, Some(1)).unwrap();
        assert_eq!(c.gpus.len(), 1);
        assert_eq!(c.gpus[0].index, 3);
        assert!(
            c.how.starts_with("GPU 3, the 1 of 8 listed that was busy"),
            "{}",
            c.how
        );
        assert_eq!(choose(&eight, Some(&[0, 1]), None).unwrap().gpus.len(), 2);
        assert_eq!(choose(&eight, None, Some(8)).unwrap().gpus.len(), 8);
        let err = choose(&eight, None, Some(2)).err().unwrap();
        assert!(
            err.contains("1 of them busy, and does not say which 2"),
            "{err}"
        );
        let err = choose(&eight, Some(&[9]), None).err().unwrap();
        assert!(err.contains("GPU 9, which it does not list"), "{err}");
        assert!(
            choose(&eight, None, None)
                .err()
                .unwrap()
                .contains("--gpu-count")
        );
        // One GPU through two exporters is one GPU.
        let twins = [
            gpu(0, Some("GPU-a"), 50.0, 130.0),
            gpu(0, Some("GPU-a"), 50.0, 130.0),
        ];
        let c = choose(&twins, None, Some(1)).unwrap();
        assert_eq!(c.gpus.len(), 1);
        assert!(c.how.contains("1 GPU reported twice"), "{}", c.how);
        let (t, _) = telemetry(&c, "s", Some(50.0), 100.0);
        assert_eq!(t.power_w_mean, Some(130.0));
        assert_eq!(t.joules_per_output_token, Some(2.6));
        assert_eq!(t.energy_j, Some(13_000.0));
    }
}

//! GPU telemetry per decode window: power, energy, clocks, temperature and
//! clock-event (throttle) reasons of the GPUs the server runs on, from a DCGM
//! exporter's Prometheus endpoint (`--gpu-metrics URL`) or, when the server
//! runs on this host, from `nvidia-smi`. Parsing and summarising are pure
//! functions, tested below; docs/measurement.md defines the figures.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;

use super::metrics;
use crate::model::{EnergySource, GpuTelemetry, Throttle};

/// One GPU at one moment. A figure the source did not give is `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuReading {
    /// The GPU's index (DCGM's `gpu` label, nvidia-smi's `index`).
    pub gpu: u32,
    pub power_w: Option<f64>,
    /// The GPU's energy counter (since its driver loaded), in J.
    pub energy_j: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub sm_clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    pub temp_c: Option<f64>,
    pub util_pct: Option<f64>,
    pub memory_used_pct: Option<f64>,
    /// NVML's clock-event reasons: a bitmask (see [`throttle_of`]).
    pub reasons: Option<u64>,
}

/// The server's GPUs at one moment, `t_s` seconds after the window's start
/// (negative: just before it).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    pub t_s: f64,
    pub gpus: Vec<GpuReading>,
}

/// NVML's clock-event reasons (`nvmlClocksEventReasons`, formerly
/// "throttle reasons"), the bits of DCGM's `DCGM_FI_DEV_CLOCKS_EVENT_REASONS`
/// and of nvidia-smi's `clocks_event_reasons.active`. The others (GPU idle
/// 0x1, application clocks 0x2, sync boost 0x10, display clock 0x100) are
/// settings or idleness, not a GPU held back under load.
pub(crate) const SW_POWER_CAP: u64 = 0x4;
pub(crate) const HW_SLOWDOWN: u64 = 0x8;
pub(crate) const SW_THERMAL_SLOWDOWN: u64 = 0x20;
pub(crate) const HW_THERMAL_SLOWDOWN: u64 = 0x40;
pub(crate) const HW_POWER_BRAKE_SLOWDOWN: u64 = 0x80;

/// The verdict of one reading's reasons: a hardware slowdown (the clock
/// halved or worse: HW slowdown, HW power brake) over thermal (SW or HW
/// thermal slowdown) over the software power cap.
pub(crate) fn throttle_of(reasons: u64) -> Throttle {
    if reasons & (HW_SLOWDOWN | HW_POWER_BRAKE_SLOWDOWN) != 0 {
        Throttle::HardwareSlowdown
    } else if reasons & (SW_THERMAL_SLOWDOWN | HW_THERMAL_SLOWDOWN) != 0 {
        Throttle::Thermal
    } else if reasons & SW_POWER_CAP != 0 {
        Throttle::PowerCapped
    } else {
        Throttle::Ok
    }
}

/// A DCGM exporter's series (dcgm-exporter's names; units as it reports them).
const DCGM_POWER_W: &str = "DCGM_FI_DEV_POWER_USAGE";
const DCGM_ENERGY_MJ: &str = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
const DCGM_POWER_LIMIT_W: [&str; 2] = [
    "DCGM_FI_DEV_POWER_MGMT_LIMIT",
    "DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
];
const DCGM_SM_CLOCK_MHZ: &str = "DCGM_FI_DEV_SM_CLOCK";
const DCGM_MEM_CLOCK_MHZ: &str = "DCGM_FI_DEV_MEM_CLOCK";
const DCGM_TEMP_C: &str = "DCGM_FI_DEV_GPU_TEMP";
const DCGM_UTIL_PCT: &str = "DCGM_FI_DEV_GPU_UTIL";
/// Frame buffer used, free and reserved, MiB: used / their sum.
const DCGM_FB_MIB: [&str; 3] = [
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_RESERVED",
];
/// DCGM 3.3 renamed the field; older exporters serve the second name.
const DCGM_REASONS: [&str; 2] = [
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
];

/// DCGM's "blank" values, at and above 2^47 (`DCGM_FT_FP64_BLANK`; the
/// integer blanks are near 2^63): a field the GPU did not report, which
/// the exporter prints as a number.
const DCGM_BLANK: f64 = 140_737_488_355_328.0;

/// Every GPU of a DCGM exporter's exposition, by its `gpu` label. Series
/// repeated for one GPU (one per MIG instance) count once: the first.
pub(crate) fn dcgm_readings(samples: &[metrics::Sample]) -> BTreeMap<u32, GpuReading> {
    let mut values: BTreeMap<(u32, &str), f64> = BTreeMap::new();
    for s in samples
        .iter()
        .filter(|s| s.name.starts_with("DCGM_FI_DEV_") && s.value < DCGM_BLANK)
    {
        let Some(gpu) = s.labels.get("gpu").and_then(|g| g.parse::<u32>().ok()) else {
            continue;
        };
        values.entry((gpu, s.name.as_str())).or_insert(s.value);
    }
    let mut readings: BTreeMap<u32, GpuReading> = BTreeMap::new();
    let gpus: Vec<u32> = values.keys().map(|(g, _)| *g).collect();
    for gpu in gpus {
        let get = |name: &str| values.get(&(gpu, name)).copied();
        let first = |names: &[&str]| names.iter().find_map(|n| get(n));
        let memory_used_pct = match (get(DCGM_FB_MIB[0]), get(DCGM_FB_MIB[1])) {
            (Some(used), Some(free)) => {
                let total = used + free + get(DCGM_FB_MIB[2]).unwrap_or(0.0);
                (total > 0.0).then(|| used / total * 100.0)
            }
            _ => None,
        };
        readings.insert(
            gpu,
            GpuReading {
                gpu,
                power_w: get(DCGM_POWER_W),
                energy_j: get(DCGM_ENERGY_MJ).map(|mj| mj / 1000.0),
                power_limit_w: first(&DCGM_POWER_LIMIT_W),
                sm_clock_mhz: get(DCGM_SM_CLOCK_MHZ),
                mem_clock_mhz: get(DCGM_MEM_CLOCK_MHZ),
                temp_c: get(DCGM_TEMP_C),
                util_pct: get(DCGM_UTIL_PCT),
                memory_used_pct,
                reasons: first(&DCGM_REASONS).map(|r| r as u64),
            },
        );
    }
    readings
}

/// What `nvidia-smi --query-gpu` is asked for, in this order, then the
/// clock-event reasons under one of [`SMI_REASONS`].
pub(crate) const SMI_FIELDS: [&str; 9] = [
    "index",
    "power.draw",
    "power.limit",
    "clocks.sm",
    "clocks.mem",
    "temperature.gpu",
    "utilization.gpu",
    "memory.used",
    "memory.total",
];
/// Drivers since R535 call the field clocks_event_reasons; older ones
/// clocks_throttle_reasons, and refuse the new name.
pub(crate) const SMI_REASONS: [&str; 2] = [
    "clocks_event_reasons.active",
    "clocks_throttle_reasons.active",
];

/// nvidia-smi's arguments for one reading of every GPU (`-lms` repeats it).
pub(crate) fn smi_args(reasons_field: &str) -> Vec<String> {
    vec![
        format!("--query-gpu={},{reasons_field}", SMI_FIELDS.join(",")),
        "--format=csv,noheader,nounits".into(),
    ]
}

/// One line of `nvidia-smi --query-gpu=<SMI_FIELDS>,<reasons>
/// --format=csv,noheader,nounits`: `0, 215.34, 700.00, 1980, 2619, 61, 87,
/// 40123, 81559, 0x0000000000000000`. A field the GPU does not report
/// ("[N/A]", "[Not Supported]") is `None`; a line that is not such a line
/// (an error message) is `None`.
pub(crate) fn parse_smi_line(line: &str) -> Option<GpuReading> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() != SMI_FIELDS.len() + 1 {
        return None;
    }
    let number = |i: usize| fields[i].parse::<f64>().ok().filter(|v| v.is_finite());
    let memory_used_pct = match (number(7), number(8)) {
        (Some(used), Some(total)) if total > 0.0 => Some(used / total * 100.0),
        _ => None,
    };
    let reasons = fields[9]
        .strip_prefix("0x")
        .and_then(|hex| u64::from_str_radix(hex, 16).ok());
    Some(GpuReading {
        gpu: fields[0].parse().ok()?,
        power_w: number(1),
        energy_j: None,
        power_limit_w: number(2),
        sm_clock_mhz: number(3),
        mem_clock_mhz: number(4),
        temp_c: number(5),
        util_pct: number(6),
        memory_used_pct,
        reasons,
    })
}

/// The GPUs to sum: `--gpu-index`, else the first `count` that `source` lists.
pub(crate) fn select_gpus(
    listed: &[u32],
    index: Option<&[u32]>,
    count: u32,
    source: &str,
) -> Result<Vec<u32>, String> {
    let list = |gpus: &[u32]| {
        gpus.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    match index {
        Some(wanted) => match wanted.iter().find(|g| !listed.contains(g)) {
            Some(missing) => Err(format!(
                "--gpu-index {}: {source} has no GPU {missing}; it lists GPUs {}",
                list(wanted),
                list(listed)
            )),
            None => Ok(wanted.to_vec()),
        },
        None => {
            let mut sorted = listed.to_vec();
            sorted.sort_unstable();
            sorted.truncate(count.max(1) as usize);
            Ok(sorted)
        }
    }
}

/// ∫ of the piecewise-linear function through `points` (t, v), sorted by t,
/// over [a, b] ∩ their span, and the length of that overlap.
fn trapezoid(points: &[(f64, f64)], a: f64, b: f64) -> (f64, f64) {
    let (mut area, mut covered) = (0.0, 0.0);
    for w in points.windows(2) {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        let (lo, hi) = (t0.max(a), t1.min(b));
        if hi <= lo || t1 <= t0 {
            continue;
        }
        let at = |t: f64| v0 + (v1 - v0) * (t - t0) / (t1 - t0);
        area += (at(lo) + at(hi)) / 2.0 * (hi - lo);
        covered += hi - lo;
    }
    (area, covered)
}

/// The value at `t` of the piecewise-linear function through `points`,
/// within their span.
fn value_at(points: &[(f64, f64)], t: f64) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        (t0 <= t && t <= t1 && t1 > t0).then(|| v0 + (v1 - v0) * (t - t0) / (t1 - t0))
    })
}

/// A window's GPU figures from its readings (docs/measurement.md, "GPU
/// telemetry"). Over [0, `window_s`]:
/// - energy: the growth of the summed energy counters, where every GPU has
///   one and it moved between every two readings (an exporter that
///   collects less often than it is read repeats stale values), else the
///   trapezoid of the summed power; both interpolated at the window's ends
///   and, when the readings do not reach them, scaled from the span they
///   cover to the window;
/// - mean power: that energy / the window; J/token: it / `output_tokens`;
/// - peaks, means and the throttle verdict (the worst reason of any GPU)
///   over the readings inside the window.
///
/// `None` when there are no readings.
/// The GPUs' summed power at each sample inside the window, for the page's
/// sparkline: (seconds from the window's start, W); a sample where a GPU's
/// power is missing is left out.
pub(crate) fn power_series(samples: &[GpuSample], window_s: f64) -> Vec<(f64, f64)> {
    let mut series: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| (0.0..=window_s).contains(&s.t_s) && !s.gpus.is_empty())
        .filter_map(|s| {
            Some((
                s.t_s,
                s.gpus.iter().map(|r| r.power_w).sum::<Option<f64>>()?,
            ))
        })
        .collect();
    series.sort_by(|a, b| a.0.total_cmp(&b.0));
    series
}

pub(crate) fn summarize(
    samples: &[GpuSample],
    window_s: f64,
    output_tokens: Option<u64>,
    source: String,
    gpus: u32,
) -> Option<GpuTelemetry> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted: Vec<&GpuSample> = samples.iter().collect();
    sorted.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let summed = |f: fn(&GpuReading) -> Option<f64>| -> Vec<(f64, f64)> {
        sorted
            .iter()
            .filter(|s| !s.gpus.is_empty())
            .filter_map(|s| Some((s.t_s, s.gpus.iter().map(f).sum::<Option<f64>>()?)))
            .collect()
    };
    let power = summed(|r| r.power_w);
    let energy = summed(|r| r.energy_j);
    // Enough of the window covered to scale from: half of it.
    let enough = |covered: f64| covered >= window_s / 2.0 && covered > 0.0;
    // Fresh: every GPU's counter grew between every two readings.
    let mut per_gpu: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for r in sorted.iter().flat_map(|s| &s.gpus) {
        per_gpu.entry(r.gpu).or_default().extend(r.energy_j);
    }
    let counter_fresh = energy.len() >= 2
        && energy.len() == sorted.len()
        && per_gpu.values().all(|e| e.windows(2).all(|w| w[1] > w[0]));
    let from_counter = counter_fresh
        .then(|| {
            let (first, last) = (energy[0].0, energy[energy.len() - 1].0);
            let (a, b) = (first.max(0.0), last.min(window_s));
            let grown = value_at(&energy, b)? - value_at(&energy, a)?;
            enough(b - a).then(|| (grown * window_s / (b - a), EnergySource::Counter))
        })
        .flatten();
    let (energy_j, energy_from) = match from_counter {
        Some((j, from)) => (Some(j), Some(from)),
        None => {
            let (area, covered) = trapezoid(&power, 0.0, window_s);
            match enough(covered) {
                true => (
                    Some(area * window_s / covered),
                    Some(EnergySource::PowerSamples),
                ),
                false => (None, None),
            }
        }
    };
    let inside: Vec<&GpuSample> = sorted
        .iter()
        .copied()
        .filter(|s| (0.0..=window_s).contains(&s.t_s))
        .collect();
    let readings: Vec<&GpuReading> = inside.iter().flat_map(|s| &s.gpus).collect();
    let each = |f: fn(&GpuReading) -> Option<f64>| -> Vec<f64> {
        readings.iter().filter_map(|r| f(r)).collect()
    };
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let max = |v: Vec<f64>| v.into_iter().max_by(f64::total_cmp);
    let inside_power: Vec<f64> = power
        .iter()
        .filter(|(t, _)| (0.0..=window_s).contains(t))
        .map(|(_, p)| *p)
        .collect();
    let power_limit_w = inside
        .iter()
        .rev()
        .find_map(|s| s.gpus.iter().map(|r| r.power_limit_w).sum::<Option<f64>>());
    Some(GpuTelemetry {
        source,
        gpus,
        samples: Some(inside.len() as u32),
        power_w_mean: energy_j
            .map(|j| j / window_s)
            .or_else(|| mean(inside_power.clone())),
        power_w_max: max(inside_power),
        power_limit_w,
        energy_j,
        energy_from,
        joules_per_output_token: match (energy_j, output_tokens) {
            (Some(j), Some(tokens)) if tokens > 0 => Some(j / tokens as f64),
            _ => None,
        },
        sm_clock_mhz_mean: mean(each(|r| r.sm_clock_mhz)),
        mem_clock_mhz_mean: mean(each(|r| r.mem_clock_mhz)),
        temp_c_max: max(each(|r| r.temp_c)),
        util_pct_mean: mean(each(|r| r.util_pct)),
        memory_used_pct_max: max(each(|r| r.memory_used_pct)),
        throttle: readings
            .iter()
            .filter_map(|r| r.reasons.map(throttle_of))
            .max(),
    })
}

/// "1 s", "250 ms": an interval as the sources say it.
pub(crate) fn interval_words(every: Duration) -> String {
    let ms = every.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// "0,1" or "0-7": GPU indexes as a message lists them.
fn gpu_list(gpus: &[u32]) -> String {
    let contiguous = gpus.windows(2).all(|w| w[1] == w[0] + 1);
    match gpus {
        [first, .., last] if contiguous && gpus.len() > 2 => format!("{first}-{last}"),
        _ => gpus
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// How `sitegen run` reads GPUs, from its flags.
#[derive(Debug, Clone)]
pub(crate) struct GpuOptions<'a> {
    /// `--gpu-metrics`: a DCGM exporter's Prometheus endpoint.
    pub dcgm_url: Option<&'a str>,
    /// `--gpu-index`.
    pub gpu_index: Option<&'a [u32]>,
    /// The run's GPU count (`--gpu-count`, or what this host's nvidia-smi lists).
    pub gpu_count: u32,
    pub server_is_local: bool,
    /// `--metrics-interval`; `None` turns sampling off.
    pub every: Option<Duration>,
}

/// Reads the server's GPUs during each window.
pub(crate) struct GpuMonitor {
    source: Source,
    /// The GPUs summed, by index.
    pub gpus: Vec<u32>,
    every: Duration,
    /// What a cell's `telemetry.gpus.source` says.
    pub description: String,
    /// Whether every GPU has an energy counter (DCGM's).
    has_energy_counter: bool,
    said_stale_counter: AtomicBool,
}

enum Source {
    Dcgm { url: String, http: reqwest::Client },
    Smi(SmiProcess),
}

/// nvidia-smi's ticks so far: when each arrived, and every GPU's reading.
type Ticks = Arc<Mutex<Vec<(Instant, Vec<GpuReading>)>>>;

/// `nvidia-smi -lms` running for the whole run: one reading of every GPU
/// per tick, kept with the time it arrived. Started once, so its start-up
/// (NVML's initialisation takes a moment) falls in no window.
struct SmiProcess {
    child: Mutex<Child>,
    ticks: Ticks,
    ended: Arc<AtomicBool>,
    said_ended: AtomicBool,
}

impl Drop for SmiProcess {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The first line of a command's answer, for a message.
fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_string()
}

impl GpuMonitor {
    /// Finds the GPUs to read: with `--gpu-metrics` the exporter must
    /// answer with GPUs (an error otherwise: it was asked for); without it,
    /// this host's nvidia-smi when the server runs here. Gives the monitor,
    /// or `None` and why nothing will be recorded, and a line for the log.
    pub(crate) async fn start(
        opts: &GpuOptions<'_>,
    ) -> anyhow::Result<(Option<GpuMonitor>, String)> {
        let Some(every) = opts.every else {
            return Ok((
                None,
                "GPU telemetry: not recorded (--metrics-interval 0s turns sampling off)".into(),
            ));
        };
        if let Some(url) = opts.dcgm_url {
            return Self::start_dcgm(url, opts, every).await;
        }
        if !opts.server_is_local {
            return Ok((
                None,
                "GPU telemetry: not recorded (the server is not on this host, and --gpu-metrics names no DCGM exporter)".into(),
            ));
        }
        Self::start_smi(opts, every)
    }

    async fn start_dcgm(
        url: &str,
        opts: &GpuOptions<'_>,
        every: Duration,
    ) -> anyhow::Result<(Option<GpuMonitor>, String)> {
        super::client::install_tls_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()?;
        let text = match http.get(url).send().await {
            Ok(r) if r.status().is_success() => r.text().await?,
            Ok(r) => bail!("--gpu-metrics {url}: HTTP {}", r.status()),
            Err(e) => bail!("--gpu-metrics {url}: {e:#}"),
        };
        let readings = dcgm_readings(&metrics::parse(&text));
        let listed: Vec<u32> = readings
            .values()
            .filter(|r| r.power_w.is_some())
            .map(|r| r.gpu)
            .collect();
        if listed.is_empty() {
            bail!(
                "--gpu-metrics {url}: expected a DCGM exporter's metrics, with {DCGM_POWER_W} per GPU (label gpu); found none"
            );
        }
        let gpus = select_gpus(&listed, opts.gpu_index, opts.gpu_count, url)
            .map_err(anyhow::Error::msg)?;
        let description = format!(
            "DCGM exporter {url}, GPU{} {} every {}",
            if gpus.len() == 1 { "" } else { "s" },
            gpu_list(&gpus),
            interval_words(every)
        );
        let has_energy_counter = gpus
            .iter()
            .all(|g| readings.get(g).is_some_and(|r| r.energy_j.is_some()));
        let energy = if has_energy_counter {
            "energy from its counters"
        } else {
            "no energy counter: energy from the power samples"
        };
        let line = format!(
            "GPU telemetry: {description} (of GPUs {} it lists; {energy})",
            gpu_list(&listed)
        );
        let monitor = GpuMonitor {
            source: Source::Dcgm {
                url: url.to_string(),
                http,
            },
            gpus,
            every,
            description,
            has_energy_counter,
            said_stale_counter: AtomicBool::new(false),
        };
        Ok((Some(monitor), line))
    }

    fn start_smi(
        opts: &GpuOptions<'_>,
        every: Duration,
    ) -> anyhow::Result<(Option<GpuMonitor>, String)> {
        let not_recorded = |why: String| Ok((None, format!("GPU telemetry: not recorded ({why})")));
        let mut found = None;
        for reasons in SMI_REASONS {
            let out = match Command::new("nvidia-smi").args(smi_args(reasons)).output() {
                Ok(out) => out,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return not_recorded(
                        "the server is on this host, and there is no nvidia-smi on PATH; for a DCGM exporter pass --gpu-metrics URL".into(),
                    );
                }
                Err(e) => return not_recorded(format!("nvidia-smi could not be started: {e}")),
            };
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if out.status.success() {
                found = Some((reasons, text));
                break;
            }
            // An older driver refuses the new name of the reasons field.
            if !text.contains("not a valid field") {
                return not_recorded(format!(
                    "nvidia-smi {} failed: {}",
                    smi_args(reasons).join(" "),
                    first_line(&text)
                ));
            }
        }
        let Some((reasons, text)) = found else {
            return not_recorded(format!(
                "nvidia-smi knows neither {} nor {}",
                SMI_REASONS[0], SMI_REASONS[1]
            ));
        };
        let listed: Vec<u32> = text
            .lines()
            .filter_map(parse_smi_line)
            .map(|r| r.gpu)
            .collect();
        if listed.is_empty() {
            return not_recorded(format!("nvidia-smi listed no GPU: {}", first_line(&text)));
        }
        let gpus = select_gpus(&listed, opts.gpu_index, opts.gpu_count, "nvidia-smi")
            .map_err(anyhow::Error::msg)?;
        let mut child = Command::new("nvidia-smi")
            .args(smi_args(reasons))
            .args(["-lms".to_string(), every.as_millis().max(1).to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let ticks: Ticks = Arc::default();
        let ended = Arc::new(AtomicBool::new(false));
        {
            let ticks = Arc::clone(&ticks);
            let ended = Arc::clone(&ended);
            let gpu_count = listed.len();
            std::thread::spawn(move || {
                // One tick prints every GPU's line: a tick is complete when
                // it has them all, or when a GPU comes round again.
                let mut tick: Vec<GpuReading> = Vec::new();
                let mut at = Instant::now();
                for line in std::io::BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let Some(reading) = parse_smi_line(&line) else {
                        continue;
                    };
                    if tick.iter().any(|r| r.gpu == reading.gpu) {
                        let done = std::mem::take(&mut tick);
                        ticks
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((at, done));
                    }
                    if tick.is_empty() {
                        at = Instant::now();
                    }
                    tick.push(reading);
                    if tick.len() == gpu_count {
                        let done = std::mem::take(&mut tick);
                        ticks
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((at, done));
                    }
                }
                ended.store(true, Ordering::SeqCst);
            });
        }
        let description = format!(
            "nvidia-smi, GPU{} {} every {}",
            if gpus.len() == 1 { "" } else { "s" },
            gpu_list(&gpus),
            interval_words(every)
        );
        let line = format!(
            "GPU telemetry: {description} (of GPUs {} on this host; energy from the power samples)",
            gpu_list(&listed)
        );
        let monitor = GpuMonitor {
            source: Source::Smi(SmiProcess {
                child: Mutex::new(child),
                ticks,
                ended,
                said_ended: AtomicBool::new(false),
            }),
            gpus,
            every,
            description,
            has_energy_counter: false,
            said_stale_counter: AtomicBool::new(false),
        };
        Ok((Some(monitor), line))
    }

    /// Says once when an exporter's energy counters could not be used for a
    /// window although it has them: they repeated a value between two
    /// readings, as when the exporter collects less often than it is read.
    pub(crate) fn note_energy_source(&self, g: &GpuTelemetry) {
        if self.has_energy_counter
            && g.energy_from == Some(EnergySource::PowerSamples)
            && !self.said_stale_counter.swap(true, Ordering::SeqCst)
        {
            eprintln!(
                "GPU telemetry: the exporter's energy counters did not grow between every two readings {} apart (the exporter refreshes its values at its collection interval, dcgm-exporter's -c in ms: set it at or below --metrics-interval): energy from the power samples where that happens",
                interval_words(self.every)
            );
        }
    }

    /// The server's GPUs of one reading; `None` when one of them is missing.
    fn selected(&self, readings: impl IntoIterator<Item = GpuReading>) -> Option<Vec<GpuReading>> {
        let chosen: Vec<GpuReading> = readings
            .into_iter()
            .filter(|r| self.gpus.contains(&r.gpu))
            .collect();
        (chosen.len() == self.gpus.len()).then_some(chosen)
    }

    /// One reading of the exporter's GPUs, timed at the middle of its
    /// request; `None` from nvidia-smi (its ticks come by themselves), or
    /// when the exporter did not answer with every GPU.
    pub(crate) async fn read_now(&self) -> Option<(Instant, Vec<GpuReading>)> {
        let Source::Dcgm { url, http } = &self.source else {
            return None;
        };
        let sent = Instant::now();
        let text = http.get(url).send().await.ok()?.text().await.ok()?;
        let answered = Instant::now();
        let middle = sent + answered.duration_since(sent) / 2;
        let readings = dcgm_readings(&metrics::parse(&text));
        Some((middle, self.selected(readings.into_values())?))
    }

    /// The readings of the window from `t0` to `deadline`. From a DCGM
    /// exporter: `opening` (taken just before the streams start, so it
    /// does not compete with their first requests), one every interval and
    /// one at the deadline. From nvidia-smi: its ticks from the one before
    /// the start to the last one in (up to an interval after the deadline),
    /// timed as they arrived.
    pub(crate) async fn window(
        &self,
        t0: Instant,
        deadline: Instant,
        opening: Option<(Instant, Vec<GpuReading>)>,
    ) -> Vec<GpuSample> {
        let secs = |at: Instant| {
            at.saturating_duration_since(t0).as_secs_f64()
                - t0.saturating_duration_since(at).as_secs_f64()
        };
        match &self.source {
            Source::Dcgm { .. } => {
                let window = deadline.saturating_duration_since(t0);
                let mut at: Vec<Duration> = (1..)
                    .map(|k| self.every * k)
                    .take_while(|t| *t < window)
                    .collect();
                at.push(window);
                let mut samples: Vec<GpuSample> = opening
                    .into_iter()
                    .map(|(at, gpus)| GpuSample {
                        t_s: secs(at),
                        gpus,
                    })
                    .collect();
                for offset in at {
                    tokio::time::sleep_until((t0 + offset).into()).await;
                    if let Some((at, gpus)) = self.read_now().await {
                        samples.push(GpuSample {
                            t_s: secs(at),
                            gpus,
                        });
                    }
                }
                samples
            }
            Source::Smi(smi) => {
                tokio::time::sleep_until(deadline.into()).await;
                let every = self.every.as_secs_f64();
                let window = secs(deadline);
                let mut ticks = smi.ticks.lock().unwrap_or_else(|e| e.into_inner());
                let samples: Vec<GpuSample> = ticks
                    .iter()
                    .filter(|(at, _)| {
                        let t = secs(*at);
                        t >= -1.5 * every && t <= window + 1.5 * every
                    })
                    .filter_map(|(at, readings)| {
                        Some(GpuSample {
                            t_s: secs(*at),
                            gpus: self.selected(readings.iter().cloned())?,
                        })
                    })
                    .collect();
                // Nothing older is needed again.
                ticks.retain(|(at, _)| secs(*at) > window - 1.5 * every);
                drop(ticks);
                if samples.is_empty()
                    && smi.ended.load(Ordering::SeqCst)
                    && !smi.said_ended.swap(true, Ordering::SeqCst)
                {
                    eprintln!(
                        "GPU telemetry: nvidia-smi stopped printing readings; windows from now on record no GPU figures"
                    );
                }
                samples
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(gpu: u32, power_w: f64, energy_j: Option<f64>, reasons: u64) -> GpuReading {
        GpuReading {
            gpu,
            power_w: Some(power_w),
            energy_j,
            power_limit_w: Some(700.0),
            sm_clock_mhz: Some(1980.0),
            mem_clock_mhz: Some(2619.0),
            temp_c: Some(60.0),
            util_pct: Some(100.0),
            memory_used_pct: Some(50.0),
            reasons: Some(reasons),
        }
    }

    #[test]
    fn reads_a_dcgm_exporter_per_gpu() {
        let text = r#"# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-a",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h"} 1980
DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-b",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="h"} 1755
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} 512.25
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b"} 88.5
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a"} 123456789
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 60000
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a"} 19000
DCGM_FI_DEV_FB_RESERVED{gpu="0",UUID="GPU-a"} 1000
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="1",UUID="GPU-b"} 36
DCGM_FI_DEV_GPU_TEMP{UUID="no-gpu-label"} 99
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-b"} 9223372036854775794
"#;
        let r = dcgm_readings(&metrics::parse(text));
        assert_eq!(r.len(), 2);
        assert_eq!(r[&0].power_w, Some(512.25));
        assert_eq!(r[&0].energy_j, Some(123_456.789), "mJ read as J");
        assert_eq!(r[&0].memory_used_pct, Some(75.0));
        assert_eq!(r[&0].reasons, None, "not recorded, not 0");
        assert_eq!(r[&1].sm_clock_mhz, Some(1755.0));
        assert_eq!(r[&1].energy_j, None);
        assert_eq!(r[&1].temp_c, None, "DCGM's blank is not a temperature");
        // 36 = 0x24: SW power cap and SW thermal slowdown, the older name.
        assert_eq!(r[&1].reasons, Some(0x24));
        assert_eq!(throttle_of(0x24), Throttle::Thermal);
    }

    #[test]
    fn reads_nvidia_smi_lines_and_what_a_gpu_does_not_report() {
        let r = parse_smi_line(
            "0, 215.34, 700.00, 1980, 2619, 61, 87, 40123, 81559, 0x0000000000000004",
        )
        .unwrap();
        assert_eq!(r.gpu, 0);
        assert_eq!(r.power_w, Some(215.34));
        assert_eq!(r.power_limit_w, Some(700.0));
        assert_eq!(r.temp_c, Some(61.0));
        assert!((r.memory_used_pct.unwrap() - 49.195).abs() < 0.001);
        assert_eq!(r.reasons, Some(SW_POWER_CAP));
        let na = parse_smi_line(
            "3, [N/A], [Not Supported], 1410, 1215, 40, 0, 5, 40960, [Not Supported]",
        )
        .unwrap();
        assert_eq!(
            (na.gpu, na.power_w, na.power_limit_w, na.reasons),
            (3, None, None, None)
        );
        assert_eq!(
            parse_smi_line("Field \"clocks_event_reasons.active\" is not a valid field to query."),
            None
        );
    }

    #[test]
    fn the_worst_reason_decides_the_verdict() {
        assert_eq!(throttle_of(0), Throttle::Ok);
        // Idle, application clocks, sync boost, display clock: not throttled.
        assert_eq!(throttle_of(0x1 | 0x2 | 0x10 | 0x100), Throttle::Ok);
        assert_eq!(throttle_of(SW_POWER_CAP), Throttle::PowerCapped);
        assert_eq!(
            throttle_of(SW_POWER_CAP | HW_THERMAL_SLOWDOWN),
            Throttle::Thermal
        );
        assert_eq!(
            throttle_of(SW_THERMAL_SLOWDOWN | HW_POWER_BRAKE_SLOWDOWN),
            Throttle::HardwareSlowdown
        );
        assert_eq!(throttle_of(HW_SLOWDOWN), Throttle::HardwareSlowdown);
        assert!(Throttle::HardwareSlowdown > Throttle::Thermal);
        assert!(Throttle::Thermal > Throttle::PowerCapped && Throttle::PowerCapped > Throttle::Ok);
    }

    #[test]
    fn gpus_are_the_ones_asked_for_or_the_first_of_the_run_s_count() {
        assert_eq!(select_gpus(&[3, 0, 1, 2], None, 2, "x"), Ok(vec![0, 1]));
        assert_eq!(
            select_gpus(&[0, 1, 2, 3], Some(&[2, 3]), 1, "x"),
            Ok(vec![2, 3])
        );
        let err = select_gpus(&[0, 1], Some(&[4]), 1, "http://h:9400/metrics").unwrap_err();
        assert_eq!(
            err,
            "--gpu-index 4: http://h:9400/metrics has no GPU 4; it lists GPUs 0,1"
        );
        assert_eq!(gpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(gpu_list(&[0, 2]), "0,2");
    }

    /// Two GPUs at 300 W and 100 W for a 10 s window, read every second from
    /// just before the start to just after the end; 1,000 output tokens.
    fn steady(energy: bool) -> Vec<GpuSample> {
        (0..=11)
            .map(|k| {
                let t = k as f64 - 0.5;
                let e = |w: f64| energy.then_some(1.0e6 + w * (t + 0.5));
                GpuSample {
                    t_s: t,
                    gpus: vec![
                        reading(0, 300.0, e(300.0), 0),
                        reading(1, 100.0, e(100.0), 0),
                    ],
                }
            })
            .collect()
    }

    #[test]
    fn energy_comes_from_the_counters_else_from_the_power_samples() {
        let g = summarize(&steady(true), 10.0, Some(1000), "s".into(), 2).unwrap();
        assert_eq!(g.energy_from, Some(EnergySource::Counter));
        assert!(
            (g.energy_j.unwrap() - 4000.0).abs() < 1e-6,
            "{:?}",
            g.energy_j
        );
        assert!((g.power_w_mean.unwrap() - 400.0).abs() < 1e-9);
        assert!((g.joules_per_output_token.unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(g.power_w_max, Some(400.0));
        assert_eq!(g.power_limit_w, Some(1400.0));
        assert_eq!(g.samples, Some(10), "the readings inside the window");
        assert_eq!(g.throttle, Some(Throttle::Ok));

        let g = summarize(&steady(false), 10.0, Some(1000), "s".into(), 2).unwrap();
        assert_eq!(g.energy_from, Some(EnergySource::PowerSamples));
        assert!((g.energy_j.unwrap() - 4000.0).abs() < 1e-6);

        // A counter that repeats a value between readings is stale (the
        // exporter collects less often than it is read): the power samples.
        let mut stale = steady(true);
        let repeated = stale[3].gpus[0].energy_j;
        stale[4].gpus[0].energy_j = repeated;
        let g = summarize(&stale, 10.0, Some(1000), "s".into(), 2).unwrap();
        assert_eq!(g.energy_from, Some(EnergySource::PowerSamples));
    }

    #[test]
    fn the_window_s_ends_are_interpolated_and_a_short_cover_is_scaled() {
        // Power rising linearly from 0 at t = -1 to 1,200 W at t = 11: over
        // [0, 10] the mean is the value at 5 s, 600 W.
        let ramp: Vec<GpuSample> = (0..=12)
            .map(|k| {
                let t = k as f64 - 1.0;
                GpuSample {
                    t_s: t,
                    gpus: vec![reading(0, 100.0 * (t + 1.0), None, 0)],
                }
            })
            .collect();
        let g = summarize(&ramp, 10.0, None, "s".into(), 1).unwrap();
        assert!(
            (g.power_w_mean.unwrap() - 600.0).abs() < 1e-9,
            "{:?}",
            g.power_w_mean
        );
        assert_eq!(g.joules_per_output_token, None, "no tokens: no J/token");
        // Readings from 2 s to 10 s only: their mean power times the window.
        let late: Vec<GpuSample> = steady(false).into_iter().filter(|s| s.t_s > 2.0).collect();
        let g = summarize(&late, 10.0, Some(100), "s".into(), 2).unwrap();
        assert!((g.energy_j.unwrap() - 4000.0).abs() < 1e-6);
        // Under half the window covered: no energy, the rest still said.
        let few: Vec<GpuSample> = steady(false).into_iter().filter(|s| s.t_s > 6.0).collect();
        let g = summarize(&few, 10.0, Some(100), "s".into(), 2).unwrap();
        assert_eq!((g.energy_j, g.joules_per_output_token), (None, None));
        assert_eq!(g.power_w_mean, Some(400.0));
        assert_eq!(summarize(&[], 10.0, Some(1), "s".into(), 2), None);
    }

    #[test]
    fn one_throttled_reading_of_one_gpu_marks_the_window() {
        let mut samples = steady(true);
        samples[5].gpus[1].reasons = Some(HW_SLOWDOWN);
        samples[6].gpus[0].reasons = Some(SW_POWER_CAP);
        let g = summarize(&samples, 10.0, Some(1000), "s".into(), 2).unwrap();
        assert_eq!(g.throttle, Some(Throttle::HardwareSlowdown));
        // A reading outside the window does not count.
        let mut samples = steady(true);
        samples[11].gpus[0].reasons = Some(HW_SLOWDOWN);
        let g = summarize(&samples, 10.0, Some(1000), "s".into(), 2).unwrap();
        assert_eq!(g.throttle, Some(Throttle::Ok));
    }
}

//! The Hardware, Engine and Run cards of a measured run: from flags, from
//! what the server and this host tell, and from an optional `--meta` file.

use std::path::Path;
use std::process::Command;

use anyhow::Context;

use super::probe::ServerInfo;
use crate::model::redact::redact_command;
use crate::model::{
    BenchmarkTool, DecodeTest, Engine, Hardware, PrefillMode, RunMeta, RunSettings, SCHEMA_VERSION,
};

pub use crate::model::cards::MetaFlags;

/// GPUs as `nvidia-smi` lists them: (name, count, memory per GPU in GB).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LocalGpus {
    pub name: String,
    pub count: u32,
    pub memory_gb: u32,
}

/// Reads `nvidia-smi --query-gpu=name,memory.total` output (MiB).
pub(crate) fn parse_nvidia_smi(csv: &str) -> Option<LocalGpus> {
    let rows: Vec<(String, f64)> = csv
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let (name, mib) = l.rsplit_once(',')?;
            Some((
                name.trim().trim_start_matches("NVIDIA ").to_string(),
                mib.trim().parse().ok()?,
            ))
        })
        .collect();
    let (name, mib) = rows.first()?.clone();
    Some(LocalGpus {
        name,
        count: rows.len() as u32,
        // nvidia-smi reports usable MiB; vendors name GiB-ish round figures.
        memory_gb: (mib / 1024.0).round() as u32,
    })
}

fn local_gpus() -> Option<LocalGpus> {
    let out = Command::new("nvidia-smi")
        .args([
            "--query-gpu=name,memory.total",
            "--format=csv,noheader,nounits",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| parse_nvidia_smi(&String::from_utf8_lossy(&out.stdout)))?
}

fn default_repository(engine: &str) -> Option<String> {
    match engine {
        "vllm" => Some("github.com/vllm-project/vllm".into()),
        "sglang" => Some("github.com/sgl-project/sglang".into()),
        "llama.cpp" => Some("github.com/ggml-org/llama.cpp".into()),
        _ => None,
    }
}

/// Assembles `run.json`. `server_is_local` allows reading this host's GPUs and OS.
/// How `sitegen run` measures: the Run card's settings it decided.
pub(crate) struct HowMeasured {
    pub window_s: f64,
    pub max_output: u32,
    pub endpoint: crate::model::ApiEndpoint,
    pub token_count: crate::model::TokenCount,
    /// `None` when the plan measures no prefill cell (`--sessions-only`):
    /// the Run card then says nothing of a prefill the run did not make.
    pub prefill_mode: Option<PrefillMode>,
}

pub(crate) fn build_meta(
    flags: &MetaFlags,
    info: &ServerInfo,
    server_is_local: bool,
    how: &HowMeasured,
    meta_file: Option<&Path>,
) -> anyhow::Result<RunMeta> {
    let gpus = if server_is_local { local_gpus() } else { None };
    let engine_name = flags
        .engine
        .clone()
        .or_else(|| info.engine.clone())
        .unwrap_or_else(|| crate::model::UNKNOWN.into());
    let meta = RunMeta {
        schema_version: SCHEMA_VERSION,
        model: flags
            .model_name
            .clone()
            .unwrap_or_else(|| info.served_model.clone()),
        served_model: info.served_model.clone(),
        hardware: Hardware {
            kind: flags
                .hardware_type
                .clone()
                .or_else(|| gpus.as_ref().map(|_| "Discrete GPU".into())),
            gpu: flags
                .gpu
                .clone()
                .or_else(|| gpus.as_ref().map(|g| g.name.clone()))
                .unwrap_or_else(|| crate::model::UNKNOWN.into()),
            gpu_count: flags
                .gpu_count
                .or(gpus.as_ref().map(|g| g.count))
                .unwrap_or(1),
            vram_per_gpu_gb: flags.vram_gb.or(gpus.as_ref().map(|g| g.memory_gb)),
            os: flags
                .os
                .clone()
                .or_else(|| server_is_local.then(|| std::env::consts::OS.to_string())),
        },
        engine: Engine {
            repository: flags
                .repository
                .clone()
                .or_else(|| default_repository(&engine_name)),
            name: engine_name,
            version: flags
                .engine_version
                .clone()
                .or_else(|| info.engine_version.clone()),
            quantization: flags.quantization.clone(),
            backend: flags.backend.clone(),
            build: flags.build.clone(),
            commit: flags.commit.clone(),
        },
        run: RunSettings {
            revision: flags.revision.clone(),
            benchmark_tool: Some(BenchmarkTool {
                name: "sitegen".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            decode_test: DecodeTest::FixedDuration,
            prefill_mode: how.prefill_mode,
            seconds_per_measurement: Some(how.window_s),
            max_output_tokens: Some(how.max_output),
            endpoint: Some(how.endpoint),
            token_count: Some(how.token_count),
        },
        launch_command: flags.launch_command.as_deref().map(redact_command),
        source: None,
        measured_at: Some(
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        ),
    };
    match meta_file {
        None => Ok(meta),
        Some(path) => apply_meta_file(meta, path),
    }
}

/// Merges a JSON file over the metadata (RFC 7396 merge patch): fields it
/// names replace the found ones, `null` removes one.
fn apply_meta_file(meta: RunMeta, path: &Path) -> anyhow::Result<RunMeta> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read --meta", path.display()))?;
    let patch: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut value = serde_json::to_value(&meta)?;
    json_patch::merge(&mut value, &patch);
    let mut merged: RunMeta = serde_path_to_error::deserialize(value)
        .map_err(|e| anyhow::anyhow!("{}: field `{}`: {}", path.display(), e.path(), e.inner()))?;
    merged.launch_command = merged.launch_command.as_deref().map(redact_command);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ApiEndpoint;

    #[test]
    fn nvidia_smi_output_is_read() {
        let gpus = parse_nvidia_smi("NVIDIA H200, 143771\nNVIDIA H200, 143771\n").unwrap();
        assert_eq!(
            gpus,
            LocalGpus {
                name: "H200".into(),
                count: 2,
                memory_gb: 140
            }
        );
        assert_eq!(parse_nvidia_smi(""), None);
    }

    #[test]
    fn flags_and_meta_file_override_what_was_found_and_secrets_are_redacted() {
        let info = ServerInfo {
            served_model: "m".into(),
            engine: Some("vllm".into()),
            engine_version: Some("0.29.0".into()),
            ..Default::default()
        };
        let flags = MetaFlags {
            gpu: Some("H200 SXM".into()),
            gpu_count: Some(4),
            launch_command: Some("vllm serve m --api-key abc".into()),
            ..Default::default()
        };
        let build = |meta_file| {
            build_meta(
                &flags,
                &info,
                false,
                &HowMeasured {
                    window_s: 30.0,
                    max_output: 4096,
                    endpoint: ApiEndpoint::Completions,
                    token_count: crate::model::TokenCount::StreamUsage,
                    prefill_mode: Some(PrefillMode::DecodeWarmup),
                },
                meta_file,
            )
        };
        let meta = build(None).unwrap();
        assert_eq!(
            meta.engine.repository.as_deref(),
            Some("github.com/vllm-project/vllm")
        );
        assert_eq!(
            meta.launch_command.as_deref(),
            Some("vllm serve m --api-key <redacted>")
        );
        assert_eq!(
            meta.hardware.os, None,
            "a remote server's OS is not guessed"
        );

        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("meta.json");
        std::fs::write(&file, r#"{"model": "Nice Name", "hardware": {"vram_per_gpu_gb": 141}, "engine": {"version": null}, "launch_command": "x HF_TOKEN=s"}"#).unwrap();
        let meta = build(Some(&file)).unwrap();
        assert_eq!(meta.model, "Nice Name");
        assert_eq!(meta.hardware.vram_per_gpu_gb, Some(141));
        assert_eq!(meta.hardware.gpu, "H200 SXM");
        assert_eq!(meta.engine.version, None);
        assert_eq!(
            meta.launch_command.as_deref(),
            Some("x HF_TOKEN=<redacted>")
        );

        std::fs::write(&file, r#"{"hardware": {"gpu_count": "four"}}"#).unwrap();
        let err = build(Some(&file)).unwrap_err().to_string();
        assert!(
            err.contains("meta.json: field `hardware.gpu_count`"),
            "{err}"
        );
    }
}

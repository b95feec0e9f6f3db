//! The card fields a person gives on the command line, shared by
//! `sitegen run` and `sitegen ingest` (the same flags, the same words).

use serde_json::{Value, json};

/// Card fields given on the command line; each overrides what was found.
/// Declared once: `sitegen run` and `sitegen ingest` take them flattened
/// into their arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MetaFlags {
    /// Display name of the model (default: the served model name).
    #[arg(long)]
    pub model_name: Option<String>,
    /// Kind of accelerator for the Hardware card, e.g. "Discrete GPU".
    #[arg(long)]
    pub hardware_type: Option<String>,
    /// GPU model, e.g. "H200 SXM" (default: from nvidia-smi when the server is on this host).
    #[arg(long)]
    pub gpu: Option<String>,
    /// Number of GPUs the server runs on (default: from nvidia-smi when the server is on this host).
    #[arg(long)]
    pub gpu_count: Option<u32>,
    /// Memory of one GPU in GB.
    #[arg(long)]
    pub vram_gb: Option<u32>,
    /// Operating system of the server, e.g. "linux".
    #[arg(long)]
    pub os: Option<String>,
    /// Engine name (default: recognised from the server).
    #[arg(long)]
    pub engine: Option<String>,
    /// Engine version, e.g. "0.29.0" (default: from the server's /version).
    #[arg(long)]
    pub engine_version: Option<String>,
    /// Weight format, e.g. "FP8", "BF16", "Q4_K_M".
    #[arg(long)]
    pub quantization: Option<String>,
    /// Compute backend, e.g. "cuda", "rocm", "cpu".
    #[arg(long)]
    pub backend: Option<String>,
    /// Source repository of the engine, e.g. "github.com/vllm-project/vllm".
    #[arg(long)]
    pub repository: Option<String>,
    /// Build flavour of the engine, e.g. "cuda-13.2".
    #[arg(long)]
    pub build: Option<String>,
    /// Source commit of the engine build.
    #[arg(long)]
    pub commit: Option<String>,
    /// Model revision.
    #[arg(long)]
    pub revision: Option<String>,
    /// The server's launch command; secrets in it are redacted before it is stored.
    #[arg(long)]
    pub launch_command: Option<String>,
}

impl MetaFlags {
    /// The fields given, as a partial run.json (a merge patch); an empty
    /// object when none was.
    pub fn patch(&self) -> Value {
        let mut patch = json!({});
        let mut set = |path: &str, value: Value| {
            let mut leaf = value;
            for key in path.rsplit('.') {
                leaf = json!({ key: leaf });
            }
            json_patch::merge(&mut patch, &leaf);
        };
        let fields: [(&str, Option<Value>); 15] = [
            ("model", self.model_name.clone().map(Value::from)),
            ("hardware.type", self.hardware_type.clone().map(Value::from)),
            ("hardware.gpu", self.gpu.clone().map(Value::from)),
            ("hardware.gpu_count", self.gpu_count.map(Value::from)),
            ("hardware.vram_per_gpu_gb", self.vram_gb.map(Value::from)),
            ("hardware.os", self.os.clone().map(Value::from)),
            ("engine.name", self.engine.clone().map(Value::from)),
            (
                "engine.version",
                self.engine_version.clone().map(Value::from),
            ),
            (
                "engine.quantization",
                self.quantization.clone().map(Value::from),
            ),
            ("engine.backend", self.backend.clone().map(Value::from)),
            (
                "engine.repository",
                self.repository.clone().map(Value::from),
            ),
            ("engine.build", self.build.clone().map(Value::from)),
            ("engine.commit", self.commit.clone().map(Value::from)),
            ("run.revision", self.revision.clone().map(Value::from)),
            (
                "launch_command",
                self.launch_command
                    .as_deref()
                    .map(|c| Value::from(crate::model::redact::redact_command(c))),
            ),
        ];
        for (path, value) in fields {
            if let Some(v) = value {
                set(path, v);
            }
        }
        patch
    }

    /// The flag that gives a card field, for messages.
    pub fn flag_of(path: &str) -> Option<&'static str> {
        Some(match path {
            "model" => "--model-name",
            "hardware.gpu" => "--gpu",
            "hardware.gpu_count" => "--gpu-count",
            "engine.name" => "--engine",
            "engine.version" => "--engine-version",
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_flags_become_run_json_fields_and_secrets_are_redacted() {
        let flags = MetaFlags {
            gpu: Some("H100".into()),
            gpu_count: Some(4),
            engine: Some("vllm".into()),
            launch_command: Some("vllm serve m --api-key sk-secret".into()),
            ..Default::default()
        };
        let p = flags.patch();
        assert_eq!(p["hardware"]["gpu"], "H100");
        assert_eq!(p["hardware"]["gpu_count"], 4);
        assert_eq!(p["engine"]["name"], "vllm");
        assert!(!p.to_string().contains("sk-secret"), "{p}");
        assert_eq!(MetaFlags::default().patch(), json!({}));
    }
}

//! Removes secrets from a launch command before it is stored or shown.

const REDACTED: &str = "<redacted>";

/// Flags whose value is a secret.
const SECRET_FLAGS: [&str; 6] = [
    "--api-key",
    "--hf-token",
    "--token",
    "--api-keys",
    "--admin-api-key",
    "--ssl-keyfile-password",
];

/// Whether an environment variable name looks like it holds a secret.
fn secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|w| upper.contains(w))
}

/// Replaces the values of secret flags (`--api-key X`, `--api-key=X`) and of
/// secret-looking environment assignments (`HF_TOKEN=X`) with `<redacted>`.
/// Words are split on whitespace; quoting is kept as written.
pub(crate) fn redact_command(command: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut redact_next = false;
    for word in command.split_whitespace() {
        if redact_next {
            out.push(REDACTED.to_string());
            redact_next = false;
            continue;
        }
        if SECRET_FLAGS.contains(&word) {
            redact_next = true;
            out.push(word.to_string());
            continue;
        }
        if let Some((name, _)) = word.split_once('=') {
            let flag_secret = SECRET_FLAGS.contains(&name);
            let env_secret = !name.starts_with('-') && secret_env_name(name);
            if flag_secret || env_secret {
                out.push(format!("{name}={REDACTED}"));
                continue;
            }
        }
        if word.starts_with("hf_") && word.len() > 20 || word.starts_with("sk-") && word.len() > 20
        {
            out.push(REDACTED.to_string());
            continue;
        }
        out.push(word.to_string());
    }
    out.join(" ")
}

/// Whether a JSON key names a secret (`api_key`, `hf_token`, `password`).
/// Not every key with "token" in it: `max_tokens` is a count.
fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace('-', "_");
    matches!(
        k.as_str(),
        "api_key"
            | "apikey"
            | "token"
            | "hf_token"
            | "access_token"
            | "authorization"
            | "password"
            | "secret"
            | "bearer"
    ) || ["_api_key", "_secret", "_password", "_access_token"]
        .iter()
        .any(|end| k.ends_with(end))
}

/// Redacts secrets anywhere in a foreign tool's JSON before it is stored:
/// the value of a secret-named key, and secret flags or keys inside strings
/// (a launch command kept as text).
pub(crate) fn redact_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if secret_key(key) && !v.is_null() {
                    *v = Value::String(REDACTED.to_string());
                } else {
                    redact_json(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::String(s) => {
            let redacted = redact_command(s);
            if redacted.contains(REDACTED) {
                *s = redacted;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_foreign_json_are_redacted_and_counts_are_not() {
        let mut v = serde_json::json!({
            "api_key": "sk-live-123", "max_tokens": 4096, "total_output_tokens": 10,
            "args": {"HF_TOKEN": "hf_x", "cmd": "vllm serve m --api-key abc --port 8000"},
            "list": ["plain text stays as  it is"]
        });
        redact_json(&mut v);
        assert_eq!(v["api_key"], "<redacted>");
        assert_eq!(v["max_tokens"], 4096);
        assert_eq!(v["total_output_tokens"], 10);
        assert_eq!(v["args"]["HF_TOKEN"], "<redacted>");
        assert_eq!(
            v["args"]["cmd"],
            "vllm serve m --api-key <redacted> --port 8000"
        );
        assert_eq!(v["list"][0], "plain text stays as  it is");
    }

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(
            redact_command(
                "env HF_TOKEN=hf_abc VLLM_USE_V2=1 vllm serve m --api-key s3cret --port 8000"
            ),
            "env HF_TOKEN=<redacted> VLLM_USE_V2=1 vllm serve m --api-key <redacted> --port 8000"
        );
        assert_eq!(
            redact_command("vllm serve m --api-key=abc"),
            "vllm serve m --api-key=<redacted>"
        );
        assert_eq!(
            redact_command("curl -H Bearer sk-0123456789abcdefghijkl"),
            "curl -H Bearer <redacted>"
        );
        assert_eq!(
            redact_command("vllm serve m --max-model-len 8192"),
            "vllm serve m --max-model-len 8192"
        );
        assert_eq!(
            redact_command("OPENAI_API_KEY=x python s.py"),
            "OPENAI_API_KEY=<redacted> python s.py"
        );
    }
}

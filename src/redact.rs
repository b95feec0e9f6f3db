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
pub fn redact_command(command: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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

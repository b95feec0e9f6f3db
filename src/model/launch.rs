//! Reading the command that started a server: its settings, and what they
//! say of the run (speculative decoding). Pure; shell quoting and line
//! continuations are undone with `shlex`.

/// The settings of a launch command, one string each: `NAME=value`
/// environment assignments, `--flag value` (or `--flag` alone) and the
/// other words, shell quoting and line continuations undone.
pub(crate) fn settings(command: &str) -> Vec<String> {
    let joined = command.replace("\\\n", " ");
    let words = shlex::split(&joined)
        .unwrap_or_else(|| joined.split_whitespace().map(String::from).collect());
    let mut settings: Vec<String> = Vec::new();
    let mut flag: Option<String> = None;
    for word in words {
        match flag.take() {
            Some(f) if !word.starts_with('-') => settings.push(format!("{f} {word}")),
            Some(f) => {
                settings.push(f);
                flag = Some(word);
            }
            None if word.starts_with('-') && !word.contains('=') => flag = Some(word),
            None => settings.push(word),
        }
    }
    settings.extend(flag);
    settings
}

/// The value of `flag` among a command's settings, written `--flag value`
/// or `--flag=value`.
fn value_of<'a>(settings: &'a [String], flag: &str) -> Option<&'a str> {
    settings.iter().find_map(|s| {
        let rest = s.strip_prefix(flag)?;
        rest.strip_prefix(' ').or_else(|| rest.strip_prefix('='))
    })
}

/// Speculative decoding as the launch command asks for it: vLLM's
/// `--speculative-config` method, SGLang's `--speculative-algorithm` or
/// draft model, llama.cpp's draft model (`--model-draft`, `-md`); "yes"
/// when the method is not named.
pub(crate) fn speculative_decoding(command: Option<&str>) -> Option<String> {
    let settings = settings(command?);
    if let Some(config) = value_of(&settings, "--speculative-config") {
        let method = serde_json::from_str::<serde_json::Value>(config)
            .ok()
            .and_then(|c| c.get("method")?.as_str().map(str::to_string));
        return Some(method.unwrap_or_else(|| "yes".into()));
    }
    [
        "--speculative-algorithm",
        "--speculative-draft-model-path",
        "--model-draft",
        "-md",
    ]
    .iter()
    .find_map(|flag| value_of(&settings, flag))
    .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_undo_quoting_and_continuations() {
        let cmd = "env A=1 vllm serve m \\\n  --max-num-seqs 256 --enforce-eager \\\n  --speculative-config '{\"method\": \"dflash\"}' -tp 4";
        assert_eq!(
            settings(cmd),
            [
                "env",
                "A=1",
                "vllm",
                "serve",
                "m",
                "--max-num-seqs 256",
                "--enforce-eager",
                "--speculative-config {\"method\": \"dflash\"}",
                "-tp 4"
            ]
        );
    }

    #[test]
    fn speculative_decoding_is_read_from_launch_commands() {
        let glm = r#"vllm serve x --speculative-config '{"method":"dflash","model":"m","num_speculative_tokens":7}'"#;
        assert_eq!(speculative_decoding(Some(glm)).as_deref(), Some("dflash"));
        let eq = r#"vllm serve x --speculative-config='{"method": "eagle3"}'"#;
        assert_eq!(speculative_decoding(Some(eq)).as_deref(), Some("eagle3"));
        assert_eq!(speculative_decoding(Some("vllm serve x --tp 4")), None);
        assert_eq!(
            speculative_decoding(Some("llama-server -m a.gguf -md draft.gguf")).as_deref(),
            Some("draft.gguf")
        );
        assert_eq!(
            speculative_decoding(Some(
                "python -m sglang.launch_server --speculative-algorithm EAGLE"
            ))
            .as_deref(),
            Some("EAGLE")
        );
        assert_eq!(speculative_decoding(None), None);
    }
}

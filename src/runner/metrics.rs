//! The Prometheus text exposition format, as served on `/metrics` by vLLM,
//! SGLang and llama.cpp, and the few series the runner reads from it.
//!
//! Written here because the parser crate on crates.io (prometheus-parse 0.2)
//! rejects metric names with colons, which is every vLLM and SGLang metric.

use std::collections::BTreeMap;

/// One sample line: `name{label="value",...} 12.5`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Parses the samples of an exposition; lines it cannot read are skipped,
/// since a server may add series this reader does not know.
pub fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = line[..name_end].to_string();
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices().peekable();
        let mut key = String::new();
        let end;
        loop {
            let (i, c) = chars.next()?;
            match c {
                '}' => {
                    end = i + 1;
                    break;
                }
                ',' | ' ' => {}
                '=' => {
                    if chars.next()?.1 != '"' {
                        return None;
                    }
                    let mut value = String::new();
                    loop {
                        match chars.next()?.1 {
                            '"' => break,
                            '\\' => match chars.next()?.1 {
                                'n' => value.push('\n'),
                                other => value.push(other),
                            },
                            other => value.push(other),
                        }
                    }
                    labels.insert(std::mem::take(&mut key), value);
                }
                other => key.push(other),
            }
        }
        rest = &body[end..];
    }
    let value = rest.split_whitespace().next()?.parse::<f64>().ok()?;
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// The sum of a series over all its label sets, if the server has it.
pub fn sum(samples: &[Sample], name: &str) -> Option<f64> {
    let mut found = false;
    let total = samples
        .iter()
        .filter(|s| s.name == name)
        .inspect(|_| found = true)
        .map(|s| s.value)
        .sum();
    found.then_some(total)
}

/// The first series of `names` that the server has, summed.
pub(crate) fn first_sum(samples: &[Sample], names: &[&str]) -> Option<f64> {
    names.iter().find_map(|n| sum(samples, n))
}

/// Requests running on the server (vLLM, SGLang, llama.cpp names).
pub(crate) const RUNNING: [&str; 3] = [
    "vllm:num_requests_running",
    "sglang:num_running_reqs",
    "llamacpp:requests_processing",
];
/// Requests waiting in the server's queue.
pub(crate) const WAITING: [&str; 3] = [
    "vllm:num_requests_waiting",
    "sglang:num_queue_reqs",
    "llamacpp:requests_deferred",
];
/// The server's counter of generated tokens.
pub(crate) const GENERATED: [&str; 3] = [
    "vllm:generation_tokens_total",
    "sglang:generation_tokens_total",
    "llamacpp:tokens_predicted_total",
];

/// Pairs of series (seconds, count) whose growth over a window gives the
/// server's own mean time per output token: llama.cpp's counters of decode
/// time and predicted tokens, else the sum and count of vLLM's or SGLang's
/// time-per-output-token histogram (vLLM's inter-token latency is per step,
/// so under speculative decoding it spans several tokens).
pub(crate) const TOKEN_TIME: [(&str, &str); 5] = [
    (
        "llamacpp:tokens_predicted_seconds_total",
        "llamacpp:tokens_predicted_total",
    ),
    (
        "vllm:request_time_per_output_token_seconds_sum",
        "vllm:request_time_per_output_token_seconds_count",
    ),
    (
        "vllm:time_per_output_token_seconds_sum",
        "vllm:time_per_output_token_seconds_count",
    ),
    (
        "vllm:inter_token_latency_seconds_sum",
        "vllm:inter_token_latency_seconds_count",
    ),
    (
        "sglang:time_per_output_token_seconds_sum",
        "sglang:time_per_output_token_seconds_count",
    ),
];

/// The server's decode counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct DecodeCounters {
    pub generated_tokens: Option<f64>,
    /// (seconds, count) of the first [`TOKEN_TIME`] pair the server has.
    pub token_time: Option<(f64, f64)>,
}

impl DecodeCounters {
    pub fn read(samples: &[Sample]) -> DecodeCounters {
        DecodeCounters {
            generated_tokens: first_sum(samples, &GENERATED),
            token_time: TOKEN_TIME
                .iter()
                .find_map(|(secs, count)| Some((sum(samples, secs)?, sum(samples, count)?))),
        }
    }

    /// Growth of the generated-token counter since `before`.
    pub(crate) fn generated_since(&self, before: &DecodeCounters) -> Option<f64> {
        Some(self.generated_tokens? - before.generated_tokens?)
    }

    /// The server's mean time per output token, in ms, over what it
    /// recorded since `before`; `None` when it recorded nothing.
    pub(crate) fn ms_per_token_since(&self, before: &DecodeCounters) -> Option<f64> {
        let (s1, n1) = self.token_time?;
        let (s0, n0) = before.token_time?;
        (n1 > n0 && s1 >= s0).then(|| (s1 - s0) * 1000.0 / (n1 - n0))
    }
}

/// KV cache capacity in tokens from vLLM's `cache_config_info`:
/// a `kv_cache_size_tokens` label, or `num_gpu_blocks` x `block_size`.
pub(crate) fn vllm_kv_capacity(samples: &[Sample]) -> Option<u64> {
    let info = samples
        .iter()
        .find(|s| s.name == "vllm:cache_config_info")?;
    if let Some(t) = info
        .labels
        .get("kv_cache_size_tokens")
        .and_then(|v| v.parse().ok())
    {
        return Some(t);
    }
    let blocks: u64 = info.labels.get("num_gpu_blocks")?.parse().ok()?;
    let size: u64 = info.labels.get("block_size")?.parse().ok()?;
    Some(blocks * size)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM: &str = r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
vllm:generation_tokens_total{model_name="m"} 123456.0
vllm:cache_config_info{block_size="16",cache_dtype="auto",num_gpu_blocks="150000",prefix="a\"b,c}"} 1.0
"#;

    #[test]
    fn reads_vllm_series_summed_over_labels() {
        let s = parse(VLLM);
        assert_eq!(first_sum(&s, &RUNNING), Some(5.0));
        assert_eq!(first_sum(&s, &WAITING), Some(1.0));
        assert_eq!(first_sum(&s, &GENERATED), Some(123_456.0));
        assert_eq!(vllm_kv_capacity(&s), Some(2_400_000));
        let info = s
            .iter()
            .find(|x| x.name == "vllm:cache_config_info")
            .unwrap();
        assert_eq!(info.labels["prefix"], "a\"b,c}");
    }

    #[test]
    fn reads_llama_cpp_series_and_skips_what_it_cannot_read() {
        let s = parse(
            "llamacpp:requests_processing 2\nllamacpp:requests_deferred 4\nnot a metric line at all\nbroken{x=\"1\" 2\nvalue_less\n",
        );
        assert_eq!(first_sum(&s, &RUNNING), Some(2.0));
        assert_eq!(first_sum(&s, &WAITING), Some(4.0));
        assert_eq!(first_sum(&s, &GENERATED), None);
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn the_servers_time_per_token_is_the_growth_of_its_own_counters() {
        let before = DecodeCounters::read(&parse(
            "llamacpp:tokens_predicted_total 1000\nllamacpp:tokens_predicted_seconds_total 2.5\n",
        ));
        let after = DecodeCounters::read(&parse(
            "llamacpp:tokens_predicted_total 1400\nllamacpp:tokens_predicted_seconds_total 3.5\n",
        ));
        assert_eq!(after.generated_since(&before), Some(400.0));
        assert_eq!(after.ms_per_token_since(&before), Some(2.5));
        // Nothing recorded in between: no figure, not a division by zero.
        assert_eq!(before.ms_per_token_since(&before), None);

        let vllm = |sum: f64, count: f64| {
            DecodeCounters::read(&parse(&format!(
                "vllm:inter_token_latency_seconds_sum{{model_name=\"m\"}} {sum}\nvllm:inter_token_latency_seconds_count{{model_name=\"m\"}} {count}\n"
            )))
        };
        assert_eq!(
            vllm(4.0, 300.0).ms_per_token_since(&vllm(1.0, 100.0)),
            Some(15.0)
        );
        assert_eq!(vllm(4.0, 300.0).generated_since(&vllm(1.0, 100.0)), None);
    }
}

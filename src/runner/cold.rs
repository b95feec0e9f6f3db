//! A prefill must be cold: its prompt computed by the server, not found in
//! its prefix cache. Prompts are fresh by construction (each run draws its
//! own texts, prompt.rs); where the server counts prefix-cache hits, their
//! growth over the request proves it, and a cached prefill is measured
//! again with a fresh text, up to [`TRIES`] prompts, else it is not Valid.

/// Prompts sent for one prefill cell before a cached one is given up.
pub(crate) const TRIES: u32 = 3;

/// Whether a prefill that found `cached` of its `prompt_tokens` in the
/// server's cache counts as cold: at most the tokens the chat template adds
/// (the same for every prompt, so cached after the first request) plus 1%
/// of the prompt, which moves its TTFT by about 1%, within a window's noise.
pub(crate) fn is_cold(cached: u64, prompt_tokens: u64, template_tokens: u64) -> bool {
    cached <= template_tokens + prompt_tokens / 100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_allows_the_template_and_one_percent() {
        assert!(is_cold(0, 4096, 0));
        assert!(is_cold(40, 4096, 0));
        assert!(!is_cold(41, 4096, 0), "just over 1%");
        // vLLM counts whole blocks: a 20-token template fills one block of 16.
        assert!(is_cold(16 + 40, 4096, 20));
        assert!(
            !is_cold(4080, 4096, 20),
            "the whole prompt but its last block"
        );
    }
}

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

/// What a prefill's counters held: `cached` of `looked_up` tokens for a
/// prompt of `prompt` tokens. Counters are server-wide: more looked up than
/// the prompt means other requests were counted with it, and its hits
/// cannot be told from theirs.
pub(crate) struct Held {
    pub cached: u64,
    pub looked_up: u64,
    pub prompt: u64,
}

impl Held {
    /// In the words of a cell's reason (`Part::NotCold`), which are in
    /// model::reason beside it.
    pub fn words(&self, counter: &str) -> String {
        crate::model::reason::held_words(self.cached, self.looked_up, self.prompt, counter)
    }
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

    #[test]
    fn lookups_beyond_the_prompt_are_said_to_be_other_requests() {
        let own = Held {
            cached: 4080,
            looked_up: 4096,
            prompt: 4096,
        };
        assert_eq!(
            own.words("hits"),
            "the server's prefix cache held 4,080 of the 4,096 prompt tokens (hits)"
        );
        let mixed = Held {
            cached: 1024,
            looked_up: 5120,
            prompt: 4096,
        };
        assert!(
            mixed
                .words("hits")
                .ends_with("for a prompt of 4,096: other requests were counted with it"),
            "{}",
            mixed.words("hits")
        );
    }
}

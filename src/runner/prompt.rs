//! Prompts of an exact token length. Each text is natural-looking and its
//! own from the first token on: streams never share a cached prefix, and a
//! run never sends a text an earlier run sent (each `sitegen run` draws a
//! fresh salt), so a prefill is cold unless the server caches something
//! else; the runner checks that with the server's counters (runner/mod.rs).

use std::future::Future;

/// A seeded generator of the text's word choices (SplitMix64). Written out
/// so that prompts stay the same across versions of any crate.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[(self.next() % words.len() as u64) as usize]
    }
}

const SUBJECTS: [&str; 12] = [
    "the engineer",
    "a careful reviewer",
    "the scheduler",
    "our team",
    "the night shift",
    "a new intern",
    "the storage service",
    "the release manager",
    "every operator",
    "the research group",
    "a visiting expert",
    "the on-call developer",
];
const VERBS: [&str; 12] = [
    "measured",
    "rewrote",
    "questioned",
    "documented",
    "compared",
    "tested",
    "explained",
    "replaced",
    "profiled",
    "described",
    "reviewed",
    "simplified",
];
const OBJECTS: [&str; 14] = [
    "the memory budget",
    "an old routing table",
    "the cache policy",
    "three failing builds",
    "the quarterly report",
    "a slow database query",
    "the harbour schedule",
    "the winter forecast",
    "a broken sensor",
    "the library catalogue",
    "the bridge inspection",
    "a shipping manifest",
    "the orchard survey",
    "the museum archive",
];
const ENDINGS: [&str; 10] = [
    "before lunch",
    "after a long discussion",
    "with surprising results",
    "for the second time this week",
    "while the rain continued",
    "without telling anyone",
    "in under an hour",
    "at the request of the council",
    "despite the noise outside",
    "as the deadline approached",
];

/// Which text a prompt is: a run's salt, a stream and a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextId {
    /// Drawn afresh by each `sitegen run` (and for each new try at a cold
    /// prefill): no run repeats a text an earlier one sent a server.
    pub salt: u64,
    pub stream: u32,
    pub context: u64,
}

impl TextId {
    /// The same stream and context with another salt.
    pub fn salted(self, salt: u64) -> TextId {
        TextId { salt, ..self }
    }

    fn seed(self) -> u64 {
        let mut rng = SplitMix(self.salt);
        let mut h = rng.next() ^ (u64::from(self.stream) << 40);
        h = SplitMix(h).next() ^ self.context.wrapping_mul(0x9e37_79b9);
        SplitMix(h).next()
    }
}

/// A salt no earlier draw gave: the clock's nanoseconds, the process and
/// a count of the draws in this process.
pub fn fresh_salt() -> u64 {
    static DRAWS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    let draw = DRAWS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut rng = SplitMix(nanos ^ (u64::from(std::process::id()) << 32));
    SplitMix(rng.next() ^ draw.wrapping_mul(0x9e37_79b9_7f4a_7c15)).next()
}

/// Natural-looking text `id`, at least `min_chars` long, as words. Different
/// ids differ from the first word on: no prompt shares a prefix with another
/// stream's, with its own stream's prompt at another context, nor with any
/// prompt of another salt (which would make a "cold" prefill partly cached).
pub fn words(id: TextId, min_chars: usize) -> Vec<String> {
    let mut rng = SplitMix(id.seed());
    // A seeded number first: texts differ from their first token.
    let mut out: Vec<String> = vec![format!(
        "{}-{}.",
        100_000 + rng.next() % 900_000,
        100_000 + rng.next() % 900_000
    )];
    let mut len = out[0].len();
    let mut sentence = 0u64;
    while len < min_chars {
        sentence += 1;
        let s = format!(
            "{} {} {} {}, and entry {} was filed.",
            capitalise(rng.pick(&SUBJECTS)),
            rng.pick(&VERBS),
            rng.pick(&OBJECTS),
            rng.pick(&ENDINGS),
            sentence * 13 + rng.next() % 997
        );
        for w in s.split(' ') {
            len += w.len() + 1;
            out.push(w.to_string());
        }
    }
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A prompt and its token count as the server counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub tokens: u64,
    /// Counted by the server's tokenizer (else estimated).
    pub exact: bool,
}

/// Builds the longest prompt of text `id` with at most `target` tokens, by
/// binary search over whole words and then single-token padding, using
/// `count` (the server's tokenizer) to measure.
pub async fn exact_prompt<F, Fut>(id: TextId, target: u64, count: F) -> anyhow::Result<Prompt>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = anyhow::Result<u64>>,
{
    // Start from a sample's characters per token, with room to spare.
    let sample = words(id, 2000).join(" ");
    let sample_tokens = count(sample.clone()).await?.max(1);
    let chars_per_token = sample.len() as f64 / sample_tokens as f64;
    let mut budget = (target as f64 * chars_per_token * 1.25) as usize + 64;
    let mut all = words(id, budget);
    while count(all.join(" ")).await? < target {
        // Real tokenizers give at least one token per 16 characters.
        anyhow::ensure!(
            budget < 16 * target as usize + 4096,
            "the tokenizer counts too few tokens: cannot build a prompt of {target} tokens"
        );
        budget *= 2;
        all = words(id, budget);
    }
    // Largest prefix of words with at most `target` tokens.
    let (mut lo, mut hi) = (1usize, all.len());
    let mut best = Prompt {
        text: all[0].clone(),
        tokens: count(all[0].clone()).await?,
        exact: true,
    };
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let text = all[..mid].join(" ");
        let tokens = count(text.clone()).await?;
        if tokens <= target {
            best = Prompt {
                text,
                tokens,
                exact: true,
            };
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    // Whole words can jump by several tokens; close the gap one piece at a time.
    for _ in 0..16 {
        if best.tokens == target {
            break;
        }
        let text = format!("{} a", best.text);
        let tokens = count(text.clone()).await?;
        if tokens > target {
            break;
        }
        best = Prompt {
            text,
            tokens,
            exact: true,
        };
    }
    Ok(best)
}

/// Whether `got` prompt tokens are within 0.5% of `target`.
pub(crate) fn close_enough(got: u64, target: u64) -> bool {
    (got as f64 - target as f64).abs() <= target as f64 * 0.005
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in tokenizer that is not one token per word: 1 token per 3
    /// characters of each word, plus one for the start of the text.
    async fn fake_count(text: String) -> anyhow::Result<u64> {
        Ok(1 + text
            .split(' ')
            .map(|w| w.len().div_ceil(3) as u64)
            .sum::<u64>())
    }

    #[tokio::test]
    async fn prompts_hit_the_target_exactly() {
        for target in [100, 2048, 8192, 33_333] {
            let id = TextId {
                salt: 7,
                stream: 3,
                context: target,
            };
            let p = exact_prompt(id, target, fake_count).await.unwrap();
            assert_eq!(p.tokens, target, "target {target}");
            assert_eq!(fake_count(p.text).await.unwrap(), target);
        }
    }

    #[test]
    fn prompts_differ_from_the_first_word_and_repeat_across_calls() {
        // The first word alone: a prefix cache matches from the first token.
        let first_word = |id| words(id, 500).swap_remove(0);
        let mut seen = std::collections::HashSet::new();
        for salt in [0, 1, 2, fresh_salt(), fresh_salt()] {
            for stream in 0..8 {
                for context in [256, 512, 8192, 16_384] {
                    let id = TextId {
                        salt,
                        stream,
                        context,
                    };
                    assert!(seen.insert(first_word(id)), "{id:?} repeats a start");
                }
            }
        }
        let id = TextId {
            salt: 5,
            stream: 0,
            context: 8192,
        };
        assert_eq!(words(id, 500), words(id, 500));
        assert_ne!(words(id, 500), words(id.salted(6), 500));
    }

    #[test]
    fn tolerance_is_half_a_percent() {
        assert!(close_enough(8192, 8192));
        assert!(close_enough(8192 + 40, 8192));
        assert!(!close_enough(8192 + 41, 8192));
    }
}

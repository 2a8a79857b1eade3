//! Sizing a request for the model's window. Text is measured in bytes and
//! turned into tokens with a conservative rate (schema text tokenizes
//! densely: a 26 KB request was 12,363 tokens, about 2.1 bytes a token; 2
//! is used, so estimates err on the large side), and a part of the window
//! is kept free for the reply.

/// Bytes per token assumed when sizing (conservative: real text has more).
pub const BYTES_PER_TOKEN: usize = 2;
/// The schema's share of a request when the window is large (hosted
/// models): a request stays small and cheap even then.
pub const DEFAULT_SCHEMA_BUDGET: usize = 40_000;

/// Tokens kept free for the model's reply in a window of `window` tokens.
pub fn reply_reserve(window: usize) -> usize {
    (window / 8).clamp(256, 2048)
}

/// Tokens a text of `bytes` bytes may take, at most.
pub fn tokens_for(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The bytes of schema a request may carry in a window of `window` tokens
/// when the rest of the request (rules, history, question) takes
/// `fixed_bytes`.
pub fn schema_budget(window: usize, fixed_bytes: usize) -> usize {
    let usable = window.saturating_sub(reply_reserve(window)) * BYTES_PER_TOKEN;
    usable
        .saturating_sub(fixed_bytes)
        .min(DEFAULT_SCHEMA_BUDGET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_get_small_schemas() {
        assert_eq!(reply_reserve(4096), 512);
        assert_eq!(schema_budget(4096, 2000), (4096 - 512) * 2 - 2000);
        assert_eq!(schema_budget(8192, 2000), (8192 - 1024) * 2 - 2000);
        assert_eq!(schema_budget(128_000, 2000), DEFAULT_SCHEMA_BUDGET);
        assert_eq!(schema_budget(300, 2000), 0);
        assert_eq!(tokens_for(5), 3);
    }
}

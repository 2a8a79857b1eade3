//! Text cut to a size in bytes, never inside a character: what logs,
//! messages, previews and error quotes keep of a long text.

/// The longest start of `text` of at most `max` bytes that ends on a
/// character boundary.
pub fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_a_character() {
        assert_eq!(head("abc", 10), "abc");
        assert_eq!(head("abc", 2), "ab");
        assert_eq!(head("aé", 2), "a");
        assert_eq!(head("€uro", 2), "");
        assert_eq!(head("€uro", 3), "€");
        assert_eq!(head("", 0), "");
    }
}

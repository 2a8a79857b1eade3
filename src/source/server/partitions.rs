//! How a partitioned or sharded server table is described to the model
//! and in `aiq schema`: the parent once, with how it is partitioned, how
//! many partitions it has and on which servers the remote ones live —
//! never the partitions as tables of their own, and never a link's
//! connection details (a Spider comment can hold a host, a login and a
//! password). Pure functions; the engines gather the facts.

/// What the catalog says about one partitioned (or remote) table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Partitioning {
    /// `RANGE (created_at)`, `HASH (id)`; empty for a remote table that is
    /// not partitioned.
    pub key: String,
    /// How subpartitions are made, when they are.
    pub sub_key: Option<String>,
    /// Partitions (leaves) in all.
    pub partitions: usize,
    /// Of them, the ones that live on other servers.
    pub remote: usize,
    /// Those servers' names, as the catalog names them (never their
    /// addresses or logins), sorted, without repeats.
    pub servers: Vec<String>,
    /// What the remote parts are: "foreign tables" (postgres_fdw),
    /// "Spider" (MariaDB's sharding engine).
    pub remote_kind: RemoteKind,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum RemoteKind {
    #[default]
    Foreign,
    Spider,
}

impl Partitioning {
    /// `partitioned by RANGE (created_at), 100 partitions`;
    /// `partitioned by LIST (region), 2 partitions, foreign tables on servers a, b`;
    /// `sharded with Spider: partitioned by HASH (id), 2 partitions on servers s0, s1`;
    /// `a foreign table on server a`.
    pub(crate) fn describe(&self) -> String {
        let servers = |prefix: &str| match self.servers.as_slice() {
            [] => String::new(),
            [one] => format!("{prefix}server {one}"),
            many => format!("{prefix}servers {}", many.join(", ")),
        };
        if self.key.is_empty() {
            let what = match self.remote_kind {
                RemoteKind::Foreign => "a foreign table",
                RemoteKind::Spider => "a Spider table",
            };
            let at = servers(" on ");
            return if at.is_empty() {
                format!("{what} on another server")
            } else {
                format!("{what}{at}")
            };
        }
        let mut out = format!("partitioned by {}", self.key);
        if let Some(sub) = &self.sub_key {
            out.push_str(&format!(", subpartitioned by {sub}"));
        }
        let n = self.partitions;
        out.push_str(&format!(", {n} partition{}", if n == 1 { "" } else { "s" }));
        match self.remote_kind {
            RemoteKind::Spider => {
                out.push_str(&servers(" on "));
                format!("sharded with Spider: {out}")
            }
            RemoteKind::Foreign if self.remote == 0 => out,
            RemoteKind::Foreign => {
                let which = if self.remote == n {
                    String::new()
                } else {
                    format!("{} of them ", self.remote)
                };
                let at = servers(" on ");
                out.push_str(&format!(", {which}foreign tables{at}"));
                out
            }
        }
    }
}

/// The table's own comment, then what aiq says of its partitions.
pub(crate) fn with_comment(own: Option<String>, partitions: String) -> String {
    match own.filter(|c| !c.trim().is_empty()) {
        Some(c) => format!("{c}; {partitions}"),
        None => partitions,
    }
}

/// The server a Spider comment names (`srv "shard0"` or `server
/// "shard0"`), and nothing else of it: the rest may be a host, a login or
/// a password.
pub(crate) fn spider_server(comment: &str) -> Option<String> {
    let mut rest = comment;
    while let Some(at) = find_word(rest, &["srv", "server"]) {
        let after = rest[at..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let after = after.trim_start();
        if let Some(q) = after.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let body = &after[1..];
            if let Some(end) = body.find(q) {
                let name = &body[..end];
                if !name.is_empty() {
                    return Some(name.to_string());
                }
            }
        }
        rest = &rest[at + 3..];
    }
    None
}

/// Where one of `words` starts as a word of its own (case-insensitive).
fn find_word(text: &str, words: &[&str]) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    (0..bytes.len()).find(|&i| {
        let before_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        before_ok
            && words.iter().any(|w| {
                lower[i..].starts_with(w)
                    && lower[i + w.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_whitespace() || c == '"' || c == '\'')
            })
    })
}

/// A MySQL partition expression as people write it: `` `id` `` → `id`.
pub(crate) fn plain_expression(expr: &str) -> String {
    expr.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(key: &str, n: usize, remote: usize, servers: &[&str], kind: RemoteKind) -> Partitioning {
        Partitioning {
            key: key.into(),
            sub_key: None,
            partitions: n,
            remote,
            servers: servers.iter().map(|s| s.to_string()).collect(),
            remote_kind: kind,
        }
    }

    #[test]
    fn partitioned_tables_read_in_one_line() {
        use RemoteKind::*;
        assert_eq!(
            p("RANGE (created_at)", 100, 0, &[], Foreign).describe(),
            "partitioned by RANGE (created_at), 100 partitions"
        );
        assert_eq!(
            p("LIST (region)", 2, 2, &["east", "west"], Foreign).describe(),
            "partitioned by LIST (region), 2 partitions, foreign tables on servers east, west"
        );
        assert_eq!(
            p("RANGE (id)", 3, 1, &["east"], Foreign).describe(),
            "partitioned by RANGE (id), 3 partitions, 1 of them foreign tables on server east"
        );
        assert_eq!(
            p("HASH (id)", 2, 2, &["shard0", "shard1"], Spider).describe(),
            "sharded with Spider: partitioned by HASH (id), 2 partitions on servers shard0, shard1"
        );
        assert_eq!(
            p("", 0, 1, &["east"], Foreign).describe(),
            "a foreign table on server east"
        );
        assert_eq!(
            p("", 0, 1, &[], Spider).describe(),
            "a Spider table on another server"
        );
        let mut sub = p("RANGE (year(d))", 8, 0, &[], Foreign);
        sub.sub_key = Some("HASH (id)".into());
        assert_eq!(
            sub.describe(),
            "partitioned by RANGE (year(d)), subpartitioned by HASH (id), 8 partitions"
        );
        assert_eq!(
            with_comment(Some("sales".into()), "x".into()),
            "sales; x".to_string()
        );
        assert_eq!(with_comment(Some(" ".into()), "x".into()), "x");
    }

    #[test]
    fn only_the_server_name_is_taken_from_a_spider_comment() {
        assert_eq!(spider_server(r#"srv "shard0""#).as_deref(), Some("shard0"));
        assert_eq!(
            spider_server(r#"wrapper "mysql", host "10.0.0.7", user "link", password "s3cret", SERVER 'b1', table "t""#)
                .as_deref(),
            Some("b1")
        );
        assert_eq!(
            spider_server(r#"wrapper "mysql", host "h", password "srv_x""#),
            None
        );
        assert_eq!(spider_server(r#"wrapper "mysql", table "orders""#), None);
        assert_eq!(plain_expression("year(`created_at`)"), "year(created_at)");
    }
}

//! A `clickhouse://` or `clickhouses://` URL read into where and as whom
//! to connect. Pure; the password it holds is never shown (messages go
//! through `redact_url`).

use reqwest::Url;

/// What a `clickhouse://` URL says.
#[derive(Debug, PartialEq)]
pub(super) struct ParsedUrl {
    pub(super) base: Url,
    pub(super) user: String,
    pub(super) password: Option<String>,
    pub(super) database: String,
    pub(super) ca: Option<std::path::PathBuf>,
}

/// `clickhouse[s]://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE][?sslrootcert=FILE]`.
pub(super) fn parse_url(url: &str) -> Result<ParsedUrl, String> {
    let (scheme, rest) = url.split_once("://").ok_or("no scheme")?;
    let (http, port) = if scheme.eq_ignore_ascii_case("clickhouses") {
        ("https", 8443)
    } else {
        ("http", 8123)
    };
    let mut parsed = Url::parse(&format!("{http}://{rest}")).map_err(|e| e.to_string())?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("it names no host".into());
    }
    let decode = |s: &str| {
        percent_decode(s)
            .ok_or_else(|| "the user or password is not valid percent-encoded UTF-8".to_string())
    };
    let user = match parsed.username() {
        "" => "default".to_string(),
        u => decode(u)?,
    };
    let password = parsed.password().map(decode).transpose()?;
    let database = decode(parsed.path().trim_matches('/'))?;
    if database.contains('/') {
        return Err("the path must be one database name".into());
    }
    let mut ca = None;
    for (key, value) in parsed.query_pairs() {
        match key.as_ref() {
            "sslrootcert" => ca = Some(std::path::PathBuf::from(value.as_ref())),
            other => {
                return Err(format!(
                    "unknown parameter '{other}' (aiq knows sslrootcert=FILE)"
                ))
            }
        }
    }
    if parsed.port().is_none() {
        let _ = parsed.set_port(Some(port));
    }
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_path("/");
    parsed.set_query(None);
    Ok(ParsedUrl {
        base: parsed,
        user,
        password,
        database: if database.is_empty() {
            "default".into()
        } else {
            database
        },
        ca,
    })
}

/// `%XX` escapes decoded (URLs keep user and password percent-encoded).
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_server_login_and_database() {
        let p = parse_url("clickhouse://ann:p%40ss@db.example:9000/shop").unwrap();
        assert_eq!(p.base.as_str(), "http://db.example:9000/");
        assert_eq!(
            (p.user.as_str(), p.password.as_deref()),
            ("ann", Some("p@ss"))
        );
        assert_eq!(p.database, "shop");
        let p = parse_url("clickhouses://h").unwrap();
        assert_eq!(p.base.as_str(), "https://h:8443/");
        assert_eq!((p.user.as_str(), p.password), ("default", None));
        assert_eq!(p.database, "default");
        assert_eq!(
            parse_url("clickhouse://h/").unwrap().base.port(),
            Some(8123)
        );
        let p = parse_url("clickhouses://h/x?sslrootcert=/tmp/ca.pem").unwrap();
        assert_eq!(p.ca, Some("/tmp/ca.pem".into()));
        assert!(parse_url("clickhouse://h/x?password=y")
            .unwrap_err()
            .contains("password"));
        assert!(parse_url("clickhouse://h/a/b").is_err());
    }
}

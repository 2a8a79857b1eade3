//! Secrets in URLs: a database or model server URL may carry a password
//! (`user:pw@host`, `?password=`). Whatever aiq shows or keeps — messages,
//! labels, session files, `config show`, `-vv` traces — goes through here.

/// The URL with any password replaced by `***`, for messages: it shows a
/// password was given without showing it.
pub fn redact_url(url: &str) -> String {
    hide_password(url, Some("***"))
}

/// The URL without any password (`postgres://ann@host/db`): what sessions,
/// labels and the config keep.
pub fn strip_password(url: &str) -> String {
    hide_password(url, None)
}

fn hide_password(url: &str, mask: Option<&str>) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match (userinfo.split_once(':'), mask) {
            (Some((user, _)), Some(mask)) => format!("{user}:{mask}@{host}"),
            (Some((user, _)), None) => format!("{user}@{host}"),
            (None, _) => authority.to_string(),
        },
        None => authority.to_string(),
    };
    // `?password=…` works too for PostgreSQL.
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<String> = query
                .split('&')
                .filter_map(|pair| {
                    let key = pair.split('=').next().unwrap_or("");
                    if key.eq_ignore_ascii_case("password") {
                        mask.map(|m| format!("{key}={m}"))
                    } else {
                        Some(pair.to_string())
                    }
                })
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// `text` with the password of `url` (if it has one) replaced by `***`:
/// for messages that quote a URL in ways aiq does not control (an HTTP
/// client's error text).
pub fn mask_password_of(url: &str, text: &str) -> String {
    match password_of(url) {
        Some(pw) if !pw.is_empty() => text.replace(&pw, "***"),
        _ => text.to_string(),
    }
}

/// The password part of a URL's userinfo, if any.
fn password_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = match rest.find(['/', '?']) {
        Some(i) => &rest[..i],
        None => rest,
    };
    let (userinfo, _) = authority.rsplit_once('@')?;
    userinfo.split_once(':').map(|(_, pw)| pw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact_url("http://u:s3cret@h:8080/v1"),
            "http://u:***@h:8080/v1"
        );
        assert_eq!(
            mask_password_of(
                "http://u:s3cret@h/v1",
                "error sending request for url (http://u:s3cret@h/v1/chat/completions)"
            ),
            "error sending request for url (http://u:***@h/v1/chat/completions)"
        );
        assert_eq!(mask_password_of("http://h/v1", "as is"), "as is");
    }
}

//! `aiq doctor`: config, source and model endpoint (with the model's
//! context window and how aiq knows it) checked, one line each —
//! `ok` with what was found, or `FAIL` with what to fix. Exits with the code
//! of the first failure (2 config, 3 source, 4 model). For a server source,
//! `login` lines say what the server would let its login do past aiq's gate
//! (SPEC §4.2): `warn` for each thing to take away, which leaves the exit
//! code alone, else one `ok`.

use super::{write_stdout, Context};
use crate::cli::ModelArgs;
use crate::error::AiqError;
use crate::schema::Table;
use crate::source::{LoginPrivileges, SourceError};

/// Where docs/safety.md shows how to make a login that only reads.
const LEAST_PRIVILEGE: &str = "docs/safety.md#a-least-privilege-login";

/// Hidden tables named in one line at most; the rest are counted.
const NAMED: usize = 5;

/// `broken` is the error of a config file aiq could not use (the checks
/// after it then run with the defaults).
pub fn run(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    model: &ModelArgs,
    broken: Option<AiqError>,
) -> Result<(), AiqError> {
    let mut lines = Vec::new();
    let mut first_failure: Option<AiqError> = None;
    let mut check = |name: &str, result: Result<String, AiqError>, warn: bool| match result {
        Ok(what) if warn => lines.push(format!("warn  {name:<7} {what}")),
        Ok(what) => lines.push(format!("ok    {name:<7} {what}")),
        Err(e) => {
            lines.push(format!("FAIL  {name:<7} {e}"));
            first_failure.get_or_insert(e);
        }
    };
    let file = ctx.config.file();
    let unreadable = broken.is_some();
    check(
        "config",
        match broken {
            Some(e) => Err(e),
            None => Ok(if file.exists() {
                format!("{} (loaded)", file.display())
            } else {
                format!(
                    "{} (not created yet; defaults in use — `aiq config init` writes one)",
                    file.display()
                )
            }),
        },
        false,
    );
    let (source_line, login) = match ctx.open_source(source_arg, false) {
        Ok(o) => {
            let line = match o.source.server_status() {
                Some(status) => format!(
                    "{} ({}, {})",
                    o.label,
                    super::sources::describe_server(&status),
                    tables(o.catalog.tables.len())
                ),
                None => format!(
                    "{} ({}, {}, opened read-only)",
                    o.label,
                    o.catalog.engine,
                    tables(o.catalog.tables.len())
                ),
            };
            let hidden = o.guard.hidden_tables();
            let login = o
                .source
                .login_privileges(hidden)
                .map(|found| login_lines(&found, hidden, o.guard.privacy().hides_tables()))
                .unwrap_or_default();
            (Ok(line), login)
        }
        // The saved sources are in the file that could not be read.
        Err(e) if unreadable => (
            Err(AiqError::Usage(format!(
                "cannot tell: the saved sources are in the config file, which cannot be read (the line above); with a path or URL: {e}"
            ))),
            Vec::new(),
        ),
        Err(e) => (Err(e), Vec::new()),
    };
    check("source", source_line, false);
    for (fine, what) in login {
        check("login", Ok(what), !fine);
    }
    let model_line = ctx.connect_model(model).and_then(|m| {
        let line = m.check().map_err(AiqError::from)?;
        Ok(format!("{line}; context window {}", m.window()))
    });
    check("model", model_line, false);
    let mut text = lines.join("\n");
    text.push('\n');
    write_stdout(text.as_bytes())?;
    match first_failure {
        Some(e) => Err(AiqError::Reported(e.exit_code())),
        None => Ok(()),
    }
}

/// The `login` lines of a server source, each as (fine, text): a warning
/// for each thing the server would let the login do past aiq's gate, or
/// one line that says it can do none of them. `hidden` are the tables the
/// source hides that its catalog lists; `hides`, whether it hides any.
fn login_lines(
    found: &Result<LoginPrivileges, SourceError>,
    hidden: &[Table],
    hides: bool,
) -> Vec<(bool, String)> {
    let p = match found {
        Ok(p) => p,
        Err(e) => {
            return vec![(
                false,
                format!("cannot tell what the login may do on the server: {e}"),
            )]
        }
    };
    let who = format!("\"{}\"", p.login);
    let mut warnings = Vec::new();
    if let Some(what) = &p.superuser {
        warnings.push(format!(
            "{who} {what}: the server would let it do anything the gate misses (give aiq a login that only reads: {LEAST_PRIVILEGE})"
        ));
    }
    if let Some(what) = &p.replication {
        warnings.push(format!(
            "{who} {what}: it can read every change made to every table, hidden ones too (take that away from it: {LEAST_PRIVILEGE})"
        ));
    }
    match p.reads_hidden.as_slice() {
        [] => {}
        [one] => warnings.push(format!(
            "{who} can read the hidden table {one}: only aiq's gate keeps it out (take its access to it away: {LEAST_PRIVILEGE})"
        )),
        many => warnings.push(format!(
            "{who} can read {} hidden tables, {}: only aiq's gate keeps them out (take its access to them away: {LEAST_PRIVILEGE})",
            many.len(),
            named(many)
        )),
    }
    if !warnings.is_empty() {
        return warnings.into_iter().map(|w| (false, w)).collect();
    }
    let tables = match hidden {
        _ if !hides => "; the source hides no table".to_string(),
        [] => " and its catalog lists none of the tables the source hides".to_string(),
        [one] => format!(" and cannot read the hidden table {}", one.name),
        many => format!(" and can read none of the {} hidden tables", many.len()),
    };
    let replicate = if hides {
        ", cannot replicate"
    } else {
        " and cannot replicate"
    };
    vec![(true, format!("{who} is no superuser{replicate}{tables}"))]
}

/// `a, b and c`; past [`NAMED`] names, `a, b, c, d, e and 7 more`.
fn named(names: &[String]) -> String {
    let shown = &names[..names.len().min(NAMED)];
    let rest = names.len() - shown.len();
    match (shown.split_last(), rest) {
        (Some((last, first)), 0) if !first.is_empty() => {
            format!("{} and {last}", first.join(", "))
        }
        (_, 0) => shown.join(", "),
        _ => format!("{} and {rest} more", shown.join(", ")),
    }
}

/// `1 table or view`, `2 tables and views`.
fn tables(n: usize) -> String {
    match n {
        1 => "1 table or view".into(),
        n => format!("{n} tables and views"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str) -> Table {
        Table {
            name: name.into(),
            ..Table::default()
        }
    }

    fn login(
        superuser: Option<&str>,
        replication: Option<&str>,
        reads: &[&str],
    ) -> LoginPrivileges {
        LoginPrivileges {
            login: "pat".into(),
            superuser: superuser.map(str::to_string),
            replication: replication.map(str::to_string),
            reads_hidden: reads.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn each_thing_past_the_gate_is_one_warning() {
        let hidden = [table("payroll"), table("bonus")];
        let lines = login_lines(
            &Ok(login(
                Some("is a superuser"),
                Some("has REPLICATION"),
                &["payroll"],
            )),
            &hidden,
            true,
        );
        let want = [
            "\"pat\" is a superuser: the server would let it do anything the gate misses (give aiq a login that only reads: docs/safety.md#a-least-privilege-login)",
            "\"pat\" has REPLICATION: it can read every change made to every table, hidden ones too (take that away from it: docs/safety.md#a-least-privilege-login)",
            "\"pat\" can read the hidden table payroll: only aiq's gate keeps it out (take its access to it away: docs/safety.md#a-least-privilege-login)",
        ];
        assert_eq!(
            lines,
            want.iter()
                .map(|w| (false, w.to_string()))
                .collect::<Vec<_>>()
        );
        let many: Vec<String> = (1..=7).map(|i| format!("t{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let lines = login_lines(&Ok(login(None, None, &many)), &hidden, true);
        assert!(
            lines[0].1.starts_with(
                "\"pat\" can read 7 hidden tables, t1, t2, t3, t4, t5 and 2 more: only aiq's gate keeps them out"
            ),
            "{lines:?}"
        );
        let lines = login_lines(&Ok(login(None, None, &["a", "b"])), &hidden, true);
        assert!(
            lines[0].1.contains("2 hidden tables, a and b: "),
            "{lines:?}"
        );
    }

    #[test]
    fn a_login_that_can_do_none_of_it_gets_one_ok() {
        let ok = |hidden: &[Table], hides: bool| {
            let lines = login_lines(&Ok(login(None, None, &[])), hidden, hides);
            assert_eq!(lines.len(), 1);
            assert!(lines[0].0);
            lines[0].1.clone()
        };
        assert_eq!(
            ok(&[table("payroll")], true),
            "\"pat\" is no superuser, cannot replicate and cannot read the hidden table payroll"
        );
        assert_eq!(
            ok(&[table("a"), table("b")], true),
            "\"pat\" is no superuser, cannot replicate and can read none of the 2 hidden tables"
        );
        assert_eq!(
            ok(&[], true),
            "\"pat\" is no superuser, cannot replicate and its catalog lists none of the tables the source hides"
        );
        assert_eq!(
            ok(&[], false),
            "\"pat\" is no superuser and cannot replicate; the source hides no table"
        );
    }

    #[test]
    fn a_question_the_server_would_not_answer_is_a_warning() {
        let lines = login_lines(&Err(SourceError("permission denied".into())), &[], false);
        assert_eq!(
            lines,
            [(
                false,
                "cannot tell what the login may do on the server: permission denied".to_string()
            )]
        );
    }
}

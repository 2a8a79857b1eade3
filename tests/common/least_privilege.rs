//! The least-privilege logins of docs/safety.md ("A least-privilege
//! login") on the real servers: the statements come from the page itself,
//! so that the page is what is tested, and `aiq doctor` says what each
//! login could do past the gate. The page's example is the database
//! `sales` that shows `customers` and `orders` and hides `payroll`.

#![allow(dead_code)]

use super::llm::ModelServer;
use super::{stderr_of, stdout_of, Sandbox};

/// The login and password the page's statements make.
pub const READER: &str = "aiq_reader";
pub const READER_PASSWORD: &str = "change-this-password";

/// The page's example tables, for PostgreSQL and MariaDB: one row each.
pub const SALES: &str = "
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, total DECIMAL(10,2) NOT NULL);
    CREATE TABLE payroll (id INTEGER PRIMARY KEY, salary_cents INTEGER NOT NULL);
    INSERT INTO customers VALUES (1, 'Ada');
    INSERT INTO orders VALUES (1, 1, 9.50);
    INSERT INTO payroll VALUES (1, 7340000);
";

/// Where doctor's warnings send the reader.
const SEE: &str = "docs/safety.md#a-least-privilege-login";

fn page() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/safety.md");
    std::fs::read_to_string(path).expect("docs/safety.md")
}

/// The text of each fenced block in docs/safety.md's section `heading`
/// (up to the next heading of its level or above) whose language is
/// `lang`, in order.
pub fn blocks(heading: &str, lang: &str) -> Vec<String> {
    let page = page();
    let level = heading.len() - heading.trim_start_matches('#').len();
    let mut lines = page.lines().skip_while(|l| l.trim_end() != heading);
    assert!(
        lines.next().is_some(),
        "no heading {heading:?} in docs/safety.md"
    );
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in lines {
        match &mut open {
            Some((info, text)) if line.trim() == "```" => {
                if info == lang {
                    out.push(std::mem::take(text));
                }
                open = None;
            }
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None if line.starts_with("```") => {
                open = Some((
                    line.trim_start_matches('`').trim().to_string(),
                    String::new(),
                ));
            }
            None if line.starts_with('#') => {
                let deeper = line.len() - line.trim_start_matches('#').len();
                if deeper <= level {
                    break;
                }
            }
            None => {}
        }
    }
    out
}

/// `aiq doctor URL` for a source that hides `payroll`, with a model that
/// answers (so that only a failure could change the exit code): the exit
/// code and the `login` lines.
pub fn doctor(url: &str) -> (Option<i32>, Vec<String>) {
    let sb = Sandbox::new();
    sb.write_config("[privacy]\nexclude = [\"payroll\"]\n");
    let model = ModelServer::start(vec![]);
    let out = sb
        .aiq_with(&model, "openai")
        .args(["doctor", url])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(
        text.lines().any(|l| l.starts_with("ok    source ")),
        "{text}{}",
        stderr_of(&out)
    );
    let lines = text
        .lines()
        .filter(|l| l.contains(" login "))
        .map(str::to_string)
        .collect();
    (out.status.code(), lines)
}

/// Doctor's warning that `login` (as the server names it) `is`
/// something that lets it do anything.
pub fn superuser(login: &str, is: &str) -> String {
    format!(
        "warn  login   \"{login}\" {is}: the server would let it do anything the gate misses (give aiq a login that only reads: {SEE})"
    )
}

/// Doctor's warning that `login` `has` what reads every change.
pub fn replication(login: &str, has: &str) -> String {
    format!(
        "warn  login   \"{login}\" {has}: it can read every change made to every table, hidden ones too (take that away from it: {SEE})"
    )
}

/// Doctor's warning that `login` can read the hidden table `payroll`.
pub fn reads_payroll(login: &str) -> String {
    format!(
        "warn  login   \"{login}\" can read the hidden table payroll: only aiq's gate keeps it out (take its access to it away: {SEE})"
    )
}

/// Doctor's line for a login that can do none of it; `seen`: the hidden
/// table is in its catalog.
pub fn fine(login: &str, seen: bool) -> String {
    let tables = match seen {
        true => "cannot read the hidden table payroll",
        false => "its catalog lists none of the tables the source hides",
    };
    format!("ok    login   \"{login}\" is no superuser, cannot replicate and {tables}")
}

//! Writes the demo shop in all four forms (SQLite, DuckDB, CSV, Parquet)
//! into OUT_DIR — the data `aiq demo` uses, for trying the other engines:
//!
//! ```text
//! cargo run --release --example demo_shop -- OUT_DIR [--scale N]
//! ```

use std::path::PathBuf;

const USAGE: &str = "usage: demo_shop OUT_DIR [--scale N]";

fn main() {
    let mut out: Option<PathBuf> = None;
    let mut scale = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                eprintln!("{USAGE}");
                return;
            }
            "--scale" => match args.next().and_then(|v| v.parse().ok()) {
                Some(n) if n > 0 => scale = n,
                _ => fail(&format!("--scale needs a positive integer; {USAGE}")),
            },
            s if s.starts_with('-') => fail(&format!("unknown option {s}; {USAGE}")),
            s if out.is_none() => out = Some(PathBuf::from(s)),
            _ => fail(&format!("too many arguments; {USAGE}")),
        }
    }
    let Some(out) = out else { fail(USAGE) };
    let forms = aiq::demo::data::Forms { duckdb: true };
    match aiq::demo::data::write(&out, scale, forms) {
        Ok(lines) => {
            for line in lines {
                eprintln!("{line}");
            }
        }
        Err(e) => fail(&e),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("demo_shop: {message}");
    std::process::exit(1)
}

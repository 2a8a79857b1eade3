//! Writes aiq's man page, generated from its command line (clap), to
//! stdout: `cargo run --example man > aiq.1`, then `man ./aiq.1`.

use clap::CommandFactory as _;

fn main() -> std::io::Result<()> {
    let command = aiq::cli::Cli::command();
    clap_mangen::Man::new(command).render(&mut std::io::stdout().lock())
}

//! `aiq demo`: from nothing to a first answer in one command. Writes the
//! demo shop into `$AIQ_HOME/demo/` (once; `--reset` rebuilds), saves it as
//! the source `demo` (the default when none is set; a user's own `demo` is
//! never replaced without asking), then:
//!
//! - with `-e`/`-q`, runs them on it, as `aiq SOURCE -e/-q` would;
//! - with `--tui`, opens the full-screen view on it;
//! - on a terminal with a model configured, starts the chat on it;
//! - otherwise prints what aiq is, three example results, and the shortest
//!   ways to connect a model — and exits 0.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use crate::agent::runner::statement_turn;
use crate::cancel::TurnSlot;
use crate::cli::{AskArgs, RunArgs};
use crate::config::{edit_file, Config};
use crate::context::{open_spec, Context};
use crate::error::{stderr_line, AiqError};
use crate::frontend::sink::{answer_on_terminal, CollectOptions, Collector};
use crate::frontend::{direct, oneshot, repl};
use crate::render::{Format, RenderOptions};
use crate::safety::Policy;
use crate::source::resolve_location;

/// The name the demo shop is saved under.
const NAME: &str = "demo";

/// Three questions and the SQL a model would write for them (SQLite).
const EXAMPLES: [(&str, &str); 3] = [
    (
        "How many customers per country? (top 5)",
        "SELECT country, count(*) AS customers FROM customers GROUP BY country ORDER BY customers DESC LIMIT 5",
    ),
    (
        "Revenue per month in 2025 (first half; revenue as the notes define it)",
        "SELECT strftime('%Y-%m', ordered_at) AS month, round(sum(total), 2) AS revenue FROM orders WHERE status IN ('delivered', 'shipped') AND ordered_at >= '2025-01-01' AND ordered_at < '2025-07-01' GROUP BY month ORDER BY month",
    ),
    (
        "Best-selling products by units sold (delivered or shipped, as the notes define it)",
        "SELECT p.name, p.category, sum(i.quantity) AS units FROM order_items i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id WHERE o.status IN ('delivered', 'shipped') GROUP BY p.id ORDER BY units DESC, p.name LIMIT 5",
    ),
];

/// Questions to try in the chat.
const TRY: &str = "how many customers per country? · revenue per month in 2025 · which products sell best in December?";

/// How `aiq demo` was asked to open the shop.
pub struct Opening {
    /// Write the files again.
    pub reset: bool,
    /// The full-screen view instead of the chat.
    pub tui: bool,
    /// The built-in evaluation suite instead of the chat.
    pub eval: bool,
    /// How that suite is run and reported (`aiq eval`'s flags).
    pub suite: crate::cli::EvalRun,
}

pub fn run(
    ctx: &Context<'_>,
    opening: Opening,
    run: &RunArgs,
    ask: &AskArgs,
) -> Result<(), AiqError> {
    if opening.tui {
        crate::frontend::charts::check(run, false)?;
        crate::frontend::tui::check_terminal()?;
    }
    let dir = ctx.config.home.join("demo");
    let db = dir.join("shop.db");
    prepare_files(&dir, &db, opening.reset)?;
    let source = save_source(ctx.config, &db)?;
    write_notes(&ctx.config.home, &source)?;
    // The config changed on disk: what follows sees the saved source.
    let config = Config::load(ctx.env)?;
    let ctx = Context {
        config: &config,
        global: ctx.global,
        env: ctx.env,
        ask_password: ctx.ask_password.clone(),
    };
    if opening.eval {
        let mut unused = crate::flags::run_given(run);
        unused.retain(|f| *f != "--format");
        unused.extend(crate::flags::ask_given(ask));
        crate::flags::refuse(&unused, "aiq demo --eval")?;
        let format = run.format.map(super::eval::report_format).transpose()?;
        return super::eval::demo(&ctx, &source, &ask.model, format, &opening.suite);
    }
    crate::flags::refuse(&opening.suite.given(), "aiq demo without --eval")?;
    if run.execute.is_some() {
        return direct::run(&ctx, Some(&source), run);
    }
    if run.lua.is_some() {
        return crate::frontend::script::run(&ctx, Some(&source), run);
    }
    if opening.tui {
        return crate::frontend::tui::run(&ctx, Some(&source), run, ask);
    }
    // A question from -q or piped in; nothing piped (a script, CI) is the
    // guide, not an error, but an empty -q is said to be empty.
    let given = ask.question.is_some();
    if let Some(question) = oneshot::question(ask)?.filter(|q| given || !q.trim().is_empty()) {
        return oneshot::run(&ctx, Some(&source), run, ask, &question);
    }
    crate::frontend::charts::check(run, false)?;
    let terminal = io::stdout().is_terminal() && io::stdin().is_terminal();
    let model = ctx.connect_model(&ask.model);
    if terminal {
        if let Ok(model) = &model {
            stderr_line(&format!(
                "aiq: the demo shop ({}) with {} {} — try: {TRY}",
                dir.display(),
                model.provider(),
                model.model()
            ));
            return repl::run(&ctx, Some(&source), run, ask);
        }
    }
    // The guide formats nothing and asks nothing: flags for a chat or a
    // question would be dropped here.
    let mut unused = crate::flags::run_given(run);
    unused.extend(crate::flags::ask_given(ask));
    crate::flags::refuse(
        &unused,
        "the demo guide (no question, SQL or script given, and no chat: it needs a terminal and a model)",
    )?;
    guide(
        &ctx,
        &db,
        &source,
        model
            .ok()
            .map(|m| format!("{} {}", m.provider(), m.model())),
    )
}

/// Gives the shop its notes (the business rules its schema cannot show)
/// unless it has notes already: a person's own are never replaced.
fn write_notes(home: &Path, source: &str) -> Result<(), AiqError> {
    let path = crate::home::notes_file(home, &crate::notes::key(source));
    if path.exists() {
        return Ok(());
    }
    crate::notes::write(home, &path, crate::demo::NOTES)
        .map_err(|e| AiqError::Usage(format!("cannot write {}: {e}", path.display())))
}

/// Writes the shop unless it is there and readable (or `reset` asks).
fn prepare_files(dir: &Path, db: &Path, reset: bool) -> Result<(), AiqError> {
    let ready = !reset && db.is_file() && dir.join("shop_csv").join("orders.csv").is_file();
    if ready {
        return Ok(());
    }
    crate::home::create_private_dir(dir.parent().unwrap_or(dir))
        .map_err(|e| AiqError::Usage(format!("cannot create {}: {e}", dir.display())))?;
    stderr_line(&format!(
        "aiq: writing the demo shop to {} …",
        dir.display()
    ));
    crate::demo::data::write(dir, 1, crate::demo::data::Forms::default())
        .map_err(|e| AiqError::Source(format!("cannot write the demo shop: {e}")))?;
    Ok(())
}

/// Saves `db` as the source `demo` (the default when there is none) and
/// returns what to open: `demo`, or the path when the user's own `demo`
/// points elsewhere and stays so.
fn save_source(config: &Config, db: &Path) -> Result<String, AiqError> {
    let url = format!("sqlite://{}", db.display());
    let path = db.display().to_string();
    if let Some(existing) = config.sources.get(NAME) {
        let same = resolve_location(&existing.url).ok() == resolve_location(&url).ok();
        if same {
            return Ok(NAME.into());
        }
        let question = crate::agent::Confirmation::new(
            crate::agent::ConfirmKind::Write,
            format!(
                "A saved source named '{NAME}' points to {}. Replace it with the demo shop?",
                crate::redact::redact_url(&existing.url)
            ),
            None,
        )
        .0;
        if !answer_on_terminal(&question, false) {
            stderr_line(&format!(
                "aiq: left your saved source '{NAME}' as it is; the demo shop is {path}"
            ));
            return Ok(path);
        }
    }
    let make_default = config.sources.default.is_none();
    edit_file(&config.home, |doc| {
        let sources = doc
            .entry("sources")
            .or_insert(toml_edit::table())
            .as_table_mut()
            .ok_or_else(|| AiqError::Usage("[sources] in config.toml is not a table".into()))?;
        let mut entry = toml_edit::Table::new();
        entry["url"] = toml_edit::value(url.as_str());
        sources[NAME] = toml_edit::Item::Table(entry);
        if make_default {
            sources["default"] = toml_edit::value(NAME);
        }
        Ok(())
    })?;
    stderr_line(&format!(
        "aiq: saved the demo shop as the source '{NAME}'{}",
        if make_default { " (the default)" } else { "" }
    ));
    Ok(NAME.into())
}

/// What aiq is, three real results, and how to connect a model.
fn guide(
    ctx: &Context<'_>,
    db: &Path,
    source: &str,
    model: Option<String>,
) -> Result<(), AiqError> {
    let resolved = ctx.resolve_source(Some(source))?;
    let src = open_spec(&resolved, ctx.open_options(false))?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let shown =
        crate::session::display_path(db.parent().unwrap_or(db), dirs::home_dir().as_deref());
    let intro = format!(
        "aiq answers questions about your data in plain language: a language model writes the SQL,\n\
         aiq proves it read-only, runs it and shows the result.\n\n\
         The demo shop is ready in {shown} (shop.db, and the same tables as CSV files in shop_csv/),\n\
         saved as the source `{source}`. A few questions, as the SQL a model writes for them:\n"
    );
    write_out(&mut out, &intro)?;
    let width = crossterm::terminal::size()
        .ok()
        .map(|(w, _)| w)
        .filter(|_| io::stdout().is_terminal());
    for (question, sql) in EXAMPLES {
        write_out(
            &mut out,
            &format!("\n  {question}\n  $ aiq demo -e \"{sql}\"\n"),
        )?;
        let options = RenderOptions {
            max_rows: Some(10),
            color: ctx.color(),
            width,
            count_budget: None,
            full_width: false,
            in_chat: false,
        };
        let mut sink = Collector::new(&mut out, Format::Table, options, CollectOptions::default());
        statement_turn(
            src.as_ref(),
            sql,
            Policy::default(),
            &TurnSlot::default(),
            &mut sink,
        )
        .map_err(AiqError::from)?;
    }
    let next = match model {
        Some(m) => format!(
            "\nA model is configured ({m}). On a terminal, `aiq demo` opens a chat on the shop;\n\
             from a script, ask once: aiq demo -q \"which city has the most VIP customers?\" -f csv\n"
        ),
        None => "\nNo language model is configured yet. Connect one (any of these) to ask in plain language:\n  \
             OpenAI:         export OPENAI_API_KEY=sk-…\n  \
             Anthropic:      export ANTHROPIC_API_KEY=sk-ant-… AIQ_PROVIDER=anthropic\n  \
             Ollama (local): ollama serve & ollama pull llama3.2   (aiq finds it at 127.0.0.1:11434)\n  \
             Any OpenAI-compatible server (llama.cpp, vLLM, LM Studio, …):\n                  \
             export AIQ_BASE_URL=http://localhost:8080/v1 AIQ_MODEL=NAME\n\
             Then `aiq demo` opens a chat on the shop, and `aiq demo -q \"which city has the most VIP customers?\"` answers once.\n"
            .to_string(),
    };
    write_out(&mut out, &next)?;
    out.flush().or_else(ignore_closed_pipe)
}

fn write_out(out: &mut impl Write, text: &str) -> Result<(), AiqError> {
    out.write_all(text.as_bytes()).or_else(ignore_closed_pipe)
}

fn ignore_closed_pipe(e: io::Error) -> Result<(), AiqError> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(AiqError::Query(format!("cannot write to stdout: {e}")))
    }
}

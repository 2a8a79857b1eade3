//! What a person asks for: a chart [`Kind`] (or none, to let the chooser
//! pick), the columns on each axis, and where an image goes — from
//! `/chart line x=month y=revenue,cost > revenue.png` or `--chart line
//! --chart-out revenue.png`. Parsing only; pure.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A kind of chart (SPEC §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Categories and their values.
    Bar,
    /// Values over time (or over an ordered column), one line per series.
    Line,
    /// One number against another.
    Scatter,
    /// How one number is distributed (a histogram).
    Hist,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Bar, Kind::Line, Kind::Scatter, Kind::Hist];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Bar => "bar",
            Kind::Line => "line",
            Kind::Scatter => "scatter",
            Kind::Hist => "hist",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "bar" | "bars" => Ok(Kind::Bar),
            "line" | "lines" => Ok(Kind::Line),
            "scatter" => Ok(Kind::Scatter),
            "hist" | "histogram" => Ok(Kind::Hist),
            _ => Err(format!(
                "unknown chart kind '{s}' (choose bar, line, scatter or hist)"
            )),
        }
    }
}

/// An image format, from a file name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Svg,
    Png,
}

impl ImageFormat {
    /// `.svg` or `.png` (any case); anything else is an error that says so.
    pub fn of(path: &Path) -> Result<ImageFormat, String> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => Err(format!(
                "cannot write a chart to {}: give a file name ending in .svg or .png",
                path.display()
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Svg => "SVG",
            ImageFormat::Png => "PNG",
        }
    }
}

/// What to chart and how: everything is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChartSpec {
    /// The kind; `None` lets the chooser pick from the columns.
    pub kind: Option<Kind>,
    /// The column on the x axis (bar: the categories).
    pub x: Option<String>,
    /// The columns with the values, one series each.
    pub y: Vec<String>,
    /// Write an image here instead of drawing in the terminal.
    pub out: Option<PathBuf>,
}

/// How `/chart` is written, for its error messages.
pub const USAGE: &str = "/chart [bar|line|scatter|hist] [x=COL] [y=COL,…] [> FILE.svg|png]";

impl ChartSpec {
    /// A spec for a kind (`--chart KIND`).
    pub fn of_kind(kind: Option<Kind>) -> ChartSpec {
        ChartSpec {
            kind,
            ..ChartSpec::default()
        }
    }

    /// Parses `/chart`'s arguments: a kind, `x=COL`, `y=COL,COL` (or several
    /// `y=`), and `> FILE` / `--out FILE`. Values may be quoted.
    pub fn parse(args: &str) -> Result<ChartSpec, String> {
        let mut spec = ChartSpec::default();
        let mut words = words(args)?.into_iter();
        while let Some(word) = words.next() {
            let lower = word.to_ascii_lowercase();
            if word == ">" || lower == "--out" || lower == "-o" {
                let Some(file) = words.next() else {
                    return Err(format!("{word} needs a file name: {USAGE}"));
                };
                spec.set_out(&file)?;
            } else if let Some(file) = word.strip_prefix('>') {
                spec.set_out(file)?;
            } else if let Some(file) = lower.strip_prefix("--out=").map(|_| &word[6..]) {
                spec.set_out(file)?;
            } else if let Some(col) = strip_key(&word, "x") {
                if col.is_empty() {
                    return Err(format!("x= needs a column name: {USAGE}"));
                }
                spec.x = Some(col.to_string());
            } else if let Some(cols) = strip_key(&word, "y") {
                let named: Vec<String> = cols
                    .split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect();
                if named.is_empty() {
                    return Err(format!("y= needs one or more column names: {USAGE}"));
                }
                spec.y.extend(named);
            } else if lower == "auto" {
                spec.kind = None;
            } else if let Ok(kind) = word.parse::<Kind>() {
                spec.kind = Some(kind);
            } else {
                return Err(format!("unknown /chart argument '{word}' ({USAGE})"));
            }
        }
        Ok(spec)
    }

    fn set_out(&mut self, file: &str) -> Result<(), String> {
        if file.is_empty() {
            return Err(format!("> needs a file name: {USAGE}"));
        }
        let path = PathBuf::from(file);
        ImageFormat::of(&path)?;
        self.out = Some(path);
        Ok(())
    }
}

/// `x=COL` → `COL` (the key in any case).
fn strip_key<'a>(word: &'a str, key: &str) -> Option<&'a str> {
    let (k, v) = word.split_once('=')?;
    k.eq_ignore_ascii_case(key).then_some(v)
}

/// Splits on whitespace; `"…"` and `'…'` keep spaces (`x="order month"`).
fn words(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("a quote is not closed in '{text}'"));
    }
    if started {
        out.push(word);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_by_name() {
        for kind in Kind::ALL {
            assert_eq!(kind.name().parse::<Kind>(), Ok(kind));
        }
        assert_eq!("Histogram".parse::<Kind>(), Ok(Kind::Hist));
        assert_eq!(
            "pie".parse::<Kind>(),
            Err("unknown chart kind 'pie' (choose bar, line, scatter or hist)".into())
        );
    }

    #[test]
    fn chart_arguments() {
        assert_eq!(ChartSpec::parse(""), Ok(ChartSpec::default()));
        let spec = ChartSpec::parse("line x=month y=revenue,cost y=units > out.PNG").unwrap();
        assert_eq!(spec.kind, Some(Kind::Line));
        assert_eq!(spec.x.as_deref(), Some("month"));
        assert_eq!(spec.y, ["revenue", "cost", "units"]);
        assert_eq!(spec.out, Some(PathBuf::from("out.PNG")));
        let spec = ChartSpec::parse("histogram --out=a.svg").unwrap();
        assert_eq!(spec.kind, Some(Kind::Hist));
        assert_eq!(spec.out, Some(PathBuf::from("a.svg")));
        let spec = ChartSpec::parse("bar x=\"order month\" >'my chart.svg'").unwrap();
        assert_eq!(spec.x.as_deref(), Some("order month"));
        assert_eq!(spec.out, Some(PathBuf::from("my chart.svg")));
        assert_eq!(ChartSpec::parse("--out b.png").unwrap().kind, None);
    }

    #[test]
    fn bad_arguments_say_why() {
        assert_eq!(
            ChartSpec::parse("pie"),
            Err(format!("unknown /chart argument 'pie' ({USAGE})"))
        );
        assert_eq!(
            ChartSpec::parse("> chart.jpg"),
            Err(
                "cannot write a chart to chart.jpg: give a file name ending in .svg or .png".into()
            )
        );
        assert_eq!(
            ChartSpec::parse("bar >"),
            Err(format!("> needs a file name: {USAGE}"))
        );
        assert_eq!(
            ChartSpec::parse("y="),
            Err(format!("y= needs one or more column names: {USAGE}"))
        );
        assert!(ChartSpec::parse("x=\"open").is_err());
    }
}

//! Saved sources (`[sources]` in config.toml): a name for a path or URL, and
//! which one is the default. The config loader reads them; resolving a
//! SOURCE argument looks names up here. Types only: no file access.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `[sources]`: the default source's name and the saved sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedSources {
    pub default: Option<String>,
    entries: BTreeMap<String, SavedSource>,
}

/// `[sources.NAME]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedSource {
    pub url: String,
    pub password_env: Option<String>,
    /// What leaves the machine for this source (SPEC §4.3).
    pub include: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
    pub samples: Option<bool>,
    pub send_results: Option<bool>,
    pub redact: Option<Vec<String>>,
    /// Functions run though aiq cannot check them (SPEC §4.2).
    pub allow_functions: Option<Vec<String>>,
    /// The table name of a glob source (SPEC §4.1).
    pub name: Option<String>,
}

impl SavedSource {
    /// A source saved by name with nothing else set.
    pub fn new(url: String, password_env: Option<String>) -> SavedSource {
        SavedSource {
            url,
            password_env,
            include: None,
            exclude: None,
            samples: None,
            send_results: None,
            redact: None,
            allow_functions: None,
            name: None,
        }
    }

    /// Its privacy keys.
    pub fn privacy(&self) -> crate::privacy::PrivacyConfig {
        crate::privacy::PrivacyConfig {
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            samples: self.samples,
            send_results: self.send_results,
            redact: self.redact.clone(),
            allow_functions: self.allow_functions.clone(),
        }
    }
}

impl SavedSources {
    pub fn get(&self, name: &str) -> Option<&SavedSource> {
        self.entries.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &SavedSource)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds (or replaces) a saved source; the config loader fills the list.
    pub fn insert(&mut self, name: String, source: SavedSource) {
        self.entries.insert(name, source);
    }
}

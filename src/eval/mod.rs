//! Checking answers (SPEC §13): suites of questions with reference SQL,
//! run through the same conversation every mode uses, compared as
//! execution-accuracy benchmarks compare results.

pub mod compare;
pub mod report;
pub mod run;
pub mod suite;

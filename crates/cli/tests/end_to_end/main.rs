//! End-to-end tests of the `gol` binary, one module a subject, in one test binary: one build
//! and link for them all, and their tests spread over the test threads together (a test that
//! waits on a server or a browser no longer holds up the others). `cargo test -p gol-cli
//! --test end_to_end -- MODULE::` runs one subject.

mod common;

mod browser;
mod checkpoint;
mod commands;
mod corpus;
mod faults;
mod files;
mod generations;
mod identify;
mod larger;
mod pictures;
mod plane;
mod rules;
mod strips;
mod tables;
mod view;

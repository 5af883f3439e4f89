//! Strict, streaming reader of the Orca log files described in docs/FORMAT.md.

//! `liborca.so`, the Orca JVMTI agent.
//!
//! Loaded with `java -agentpath:liborca.so=out/run Main`, it records what every thread does
//! with locks and threads into the three Orca files (docs/FORMAT.md). The modules follow the
//! data path, from the JVM to the files:
//!
//! - [`entry`]: every `extern` function the JVM calls (`Agent_OnLoad`, the JVMTI callbacks,
//!   the tracker's natives) and the panic guard around each; the one global, the agent;
//! - [`agent`]: the agent context and its life cycle (start-up, VMInit, threads, VMDeath);
//! - [`engines`]: one module per event source (the class-load hook and the tracker, JVMTI
//!   method events, monitor contention), each behind `start`/`stop`;
//! - [`recorder`]: what the engines record into (per-thread state, stacks, the tracker's
//!   buffers and summaries, metadata, the log writer); it calls no engine;
//! - [`events`]: the event taxonomy, shared with the Java tracker (`build.rs` generates its
//!   constants from it);
//! - [`jvmti`]: the only raw FFI, a thin safe wrapper; [`options`], [`error`], and
//!   [`escape`] (the format's text, and JVMTI's modified UTF-8).
//!
//! Imports go one way: `entry` → `agent` → `engines` → `recorder` → `events`/`jvmti`.

/// `eprintln!` that cannot panic: a program may run with its stderr a closed pipe, where
/// `eprintln!` panics (and the panic guard's own message must not panic again). What cannot
/// be said is not said.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod agent;
pub mod engines;
pub mod entry;
pub mod error;
pub mod escape;
pub mod events;
pub mod jvmti;
pub mod options;
pub mod recorder;

pub use agent::Agent;
pub use entry::agent;

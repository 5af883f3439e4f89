//! Errors the agent reports to the user. Each message names what to change.

use thiserror::Error;

/// A JVMTI call that failed, with the function name so a report is actionable.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
#[error("JVMTI {function} failed with error {code}")]
pub struct JvmtiError {
    pub function: &'static str,
    pub code: u32,
}

/// Why the agent refuses to start. Printed as one line on stderr, then `Agent_OnLoad` fails
/// so the JVM does not run the program unprofiled by surprise.
#[derive(Debug, Error)]
pub enum StartError {
    #[error("unknown option '{key}'; valid options: file=PREFIX, mode=jvmti|instrument, stackdepth=N (0..=1024), jdk=yes|no, juc=yes|no, trace=summary|all, holdthreshold=DURATION|off, holdtiming=sampled|exact, tracking=sampled|full, guards=on|off, notifies=counted|events, waitthreshold=DURATION, contentionthreshold=DURATION, stackwalk=fast|jvmti, maxsize=SIZE, maxage=DURATION, or a bare PREFIX first")]
    UnknownOption { key: String },
    #[error("option '{key}' is given twice ('{first}' and '{second}'); give it once")]
    Duplicate {
        key: String,
        first: String,
        second: String,
    },
    #[error("option '{key}' has an empty value; {expected}")]
    Empty { key: String, expected: &'static str },
    #[error("bad value '{value}' for option '{key}'; {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
    #[error("'{word}' is not key=value; only the first option may be a bare dump prefix (e.g. =out/run,stackdepth=8)")]
    BareWord { word: String },
    #[error("option '{key}' only applies to mode=instrument")]
    NeedsInstrument { key: &'static str },
    #[error("cannot write the log files with prefix '{prefix}' ({path}: {source}); choose a writable folder with file=PREFIX")]
    Output {
        prefix: String,
        path: String,
        source: std::io::Error,
    },
    /// What is at an output path is not a file Orca may replace: the JVM runs on unrecorded
    /// (a link someone planted must not stop a service from starting).
    #[error("not recording, the program runs on without Orca: {0}")]
    Refused(orca_format::output::OutputError),
    #[error("the agent is already loaded in this JVM (is -agentpath given twice?); load it once")]
    AlreadyLoaded,
    #[error("cannot start: {0}")]
    Jvmti(#[from] JvmtiError),
    #[error("this JVM does not offer the JVMTI capabilities mode={mode} needs: {missing}; use a HotSpot-based JDK 11 or later, and load the agent at start-up with -agentpath")]
    MissingCapabilities { mode: &'static str, missing: String },
    #[error("mode=jvmti cannot record a running JVM: HotSpot grants MethodEntry/MethodExit events and owned-monitor information only to an agent loaded at start-up (JVMTI's OnLoad phase); attach in mode=instrument (the default), or start the JVM with -agentpath:liborca.so=PREFIX,mode=jvmti")]
    JvmtiOnAttach,
    #[error("cannot start the log writer thread: {0}")]
    WriterThread(std::io::Error),
}

//! The event sources, one engine each, behind the same small surface: `start` switches its
//! events on, `stop` switches them off (and hands over what it still holds), and in between
//! the entry points hand it the JVM's events.
//!
//! - [`instrument`]: the class-load hook, which rewrites classes to call the tracker, and
//!   the binding of the rewritten call sites at ClassPrepare;
//! - [`tracker`]: the bundled tracker class and what its natives report;
//! - [`methods`]: JVMTI MethodEntry/MethodExit of the tracked JDK methods (JVMTI event mode);
//! - [`contention`]: JVMTI MonitorContendedEnter/Entered (both modes), with [`owners`], its
//!   thread that asks the JVM for the owners of the contentions that last;
//! - [`stack_room`]: whether a tracker report section has the stack to run to its end.
//!
//! Engines record through the [`Recorder`](crate::recorder::Recorder) and never import the
//! entry points (the JVM finds the tracker's natives there by their JNI names).

pub mod contention;
pub mod instrument;
pub mod methods;
pub mod owners;
pub mod stack_room;
pub mod tracker;

use crate::error::JvmtiError;

/// Room for the local references of a VMInit scan (all loaded classes, all threads): a few
/// hundred at start-up; HotSpot's limit is 65,536.
pub const LOCAL_FRAME: i32 = 8192;

/// Reports a failed JVMTI call once per kind of failure; recording goes on without it.
fn report(r: Result<(), JvmtiError>) {
    if let Err(e) = r {
        crate::say!("orca: {e}; some events will be missing");
    }
}

//! The contention engine's asker: a thread of the agent's that asks the JVM who holds a
//! contended monitor, only for the contentions that last ([`recorder::owners`] says why).
//!
//! The contending thread leaves its question ([`OwnerQuery`]) here and goes on blocking;
//! the asker, attached to the JVM as a daemon (`orca-owners`, not announced in the log),
//! sleeps until the oldest question is [`ask_after`] old, asks about those still open, and
//! drops the others. At a stop it answers every question still open first: a thread still
//! blocked when the recording ends (a deadlock) is written with its owner.
//!
//! [`recorder::owners`]: crate::recorder::owners

use std::cell::Cell;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use jni_sys::{jobject, JavaVM};

use crate::jvmti::{Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::ids;
use crate::recorder::owners::{ask_after, OwnerQuery};

thread_local! {
    static OWN: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is the asker: the JVM reports its attach and detach as a
/// thread's start and end, which the program's log must not show.
pub fn is_own_thread() -> bool {
    OWN.with(|o| o.get())
}

/// The owner of `object`'s monitor now, by the JVM (a safepoint): its thread ID, 0 when
/// nobody holds it or JVMTI could not tell.
pub fn owner_now(jvmti: &Jvmti, jni: Jni, object: jobject) -> u32 {
    match jvmti.monitor_owner(object) {
        Ok(t) if !t.is_null() => {
            let h = ids::thread_id(jvmti, t);
            jni.delete_local_ref(t);
            h
        }
        _ => 0,
    }
}

#[derive(Default)]
pub struct Asker {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// The asker's wake-up (a question, a stop), and the stopper's (the asker gone).
    wake: Condvar,
}

#[derive(Default)]
struct Queue {
    open: Vec<Arc<OwnerQuery>>,
    run: Run,
}

#[derive(Default, PartialEq, Eq, Clone, Copy)]
enum Run {
    #[default]
    NotStarted,
    Running,
    Stopping,
    /// Stopped, or it could not start: questions are asked at once (`ask` returns `None`).
    Gone,
}

impl Asker {
    /// Leaves the question "who holds `object`?" of a contention seen at `since` by thread
    /// `thread` with the asker (started on first use); `None` when there is no asker: the
    /// caller asks now.
    pub fn ask(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        object: jobject,
        (since, thread): (u64, u32),
        contention_threshold: u64,
    ) -> Option<Arc<OwnerQuery>> {
        let mut q = lock(&self.shared.queue);
        if q.run == Run::NotStarted {
            q.run = match self.spawn(jvmti, jni, ask_after(contention_threshold)) {
                Ok(()) => Run::Running,
                Err(e) => {
                    crate::say!("orca: cannot start the thread that asks for contended monitors' owners ({e}); asking at every contention instead");
                    Run::Gone
                }
            };
        }
        if q.run != Run::Running {
            return None;
        }
        let global = jni.new_global_ref(object);
        if global.is_null() {
            return None;
        }
        let query = Arc::new(OwnerQuery::new(since, thread, global as usize));
        // An asker with questions waits for the oldest, which is due before this one.
        if q.open.is_empty() {
            self.shared.wake.notify_all();
        }
        q.open.push(query.clone());
        Some(query)
    }

    fn spawn(&self, jvmti: Jvmti, jni: Jni, delay: u64) -> Result<(), String> {
        let vm = jni.java_vm().ok_or("no JavaVM")? as usize;
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("orca-owners".into())
            .spawn(move || run(shared, vm, jvmti, delay))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// The recording ends: the asker answers what is still open and goes (waited for up
    /// to 2 s: it may be waiting for a safepoint).
    pub fn stop(&self) {
        let mut q = lock(&self.shared.queue);
        match q.run {
            Run::NotStarted => q.run = Run::Gone,
            Run::Running => q.run = Run::Stopping,
            Run::Stopping | Run::Gone => {}
        }
        self.shared.wake.notify_all();
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while q.run == Run::Stopping {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                crate::say!("orca: the thread that asks for contended monitors' owners did not stop within 2 s; the owners it had not found are written as not known");
                return;
            }
            q = self
                .shared
                .wake
                .wait_timeout(q, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

fn lock(m: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The asker's thread.
fn run(shared: Arc<Shared>, vm: usize, jvmti: Jvmti, delay: u64) {
    OWN.with(|o| o.set(true));
    let vm = vm as *mut JavaVM;
    // SAFETY: the running VM's JavaVM*, which outlives the process's threads; this thread
    // detaches below.
    let jni = unsafe { Jni::attach_current_thread(vm, c"orca-owners") };
    if let Some(jni) = jni {
        let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            serve(&shared, jvmti, jni, delay)
        }));
        if served.is_err() {
            crate::say!("orca: the thread that asks for contended monitors' owners failed; asking at every contention from now on");
        }
        // SAFETY: as above; no reference of this thread is used after.
        unsafe { Jni::detach_current_thread(vm) };
    } else {
        crate::say!("orca: cannot attach the thread that asks for contended monitors' owners to the JVM; asking at every contention instead");
    }
    // (a question left behind by a failure is answered "not known"; its reference stays)
    let mut q = lock(&shared.queue);
    q.run = Run::Gone;
    shared.wake.notify_all();
}

fn serve(shared: &Shared, jvmti: Jvmti, jni: Jni, delay: u64) {
    loop {
        let (due, stopping) = next(shared, delay);
        for q in due {
            let object = q.object as jobject;
            if q.claim() {
                q.answer(owner_now(&jvmti, jni, object));
            }
            jni.delete_global_ref(object);
        }
        if stopping {
            return;
        }
    }
}

/// Waits for questions due (`delay` old and still open) or closed (to drop); at a stop,
/// every question left, and `true`.
fn next(shared: &Shared, delay: u64) -> (Vec<Arc<OwnerQuery>>, bool) {
    let mut q = lock(&shared.queue);
    loop {
        if q.run != Run::Running {
            return (std::mem::take(&mut q.open), true);
        }
        let now = now_nanos();
        let mut due = Vec::new();
        let mut first_due = u64::MAX;
        q.open.retain(|x| {
            let at = x.since.saturating_add(delay);
            if !x.is_open() || now >= at {
                due.push(x.clone());
                false
            } else {
                first_due = first_due.min(at);
                true
            }
        });
        if !due.is_empty() {
            return (due, false);
        }
        q = if first_due == u64::MAX {
            shared.wake.wait(q).unwrap_or_else(|e| e.into_inner())
        } else {
            let wait = Duration::from_nanos(first_due - now);
            shared
                .wake
                .wait_timeout(q, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0
        };
    }
}

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Invisibility (tests/e2e/invisible.rs): prints every stack trace the program can observe
 * around the calls Orca tracks (every exception each call can throw, StackWalker with and
 * without SHOW_REFLECT_FRAMES from inside overrides of tracked methods, Thread.getStackTrace
 * and Thread.getAllStackTraces of threads blocked in tracked calls), then prints
 * "READY <pid>" and keeps those threads blocked until a line arrives on stdin (the test takes
 * a `jcmd <pid> Thread.print` meanwhile). The output must be the same, byte for byte, with
 * and without the agent. No lambdas: their class names carry addresses.
 */
public class Invisible {
    interface Case {
        void run() throws Throwable;
    }

    static void trace(String label, Throwable e) {
        System.out.println(label + ": " + e);
        for (StackTraceElement s : e.getStackTrace()) {
            System.out.println("    at " + s);
        }
        if (e.getCause() != null) {
            trace(label + " / cause", e.getCause());
        }
    }

    static void expect(String label, Case c) {
        Thread.interrupted();
        try {
            c.run();
            System.out.println(label + ": returned");
        } catch (Throwable e) {
            trace(label, e);
        }
        Thread.interrupted();
    }

    static void walk(String label) {
        for (StackWalker w : new StackWalker[] {
                StackWalker.getInstance(), StackWalker.getInstance(StackWalker.Option.SHOW_REFLECT_FRAMES)}) {
            List<String> frames = w.walk(s -> s.map(f -> f.getClassName() + "." + f.getMethodName() + ":" + f.getLineNumber())
                    .collect(Collectors.toList()));
            System.out.println(label + " walk: " + frames);
        }
        trace(label + " throwable", new Throwable("here"));
    }

    static class Worker extends Thread {
        Worker(String name) {
            super(name);
        }

        @Override
        public synchronized void start() {
            walk("Worker.start");
            super.start();
        }

        @Override
        public void run() {
            walk("Worker.run");
        }
    }

    static class Pool extends Semaphore {
        Pool(int permits) {
            super(permits);
        }

        @Override
        public void release() {
            walk("Pool.release");
            super.release();
        }

        @Override
        public boolean tryAcquire() {
            walk("Pool.tryAcquire");
            return super.tryAcquire();
        }
    }

    static final Object LOCK = new Object();
    static final Semaphore EMPTY = new Semaphore(0);

    static class Sleeper implements Runnable {
        public void run() {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
            }
        }
    }

    static class SubclassSleeper implements Runnable {
        public void run() {
            try {
                Worker.sleep(600_000);
            } catch (InterruptedException e) {
            }
        }
    }

    static class TimedWaiter implements Runnable {
        public void run() {
            synchronized (LOCK) {
                try {
                    LOCK.wait(600_000);
                } catch (InterruptedException e) {
                }
            }
        }
    }

    static class Waiter implements Runnable {
        public void run() {
            synchronized (LOCK) {
                try {
                    LOCK.wait();
                } catch (InterruptedException e) {
                }
            }
        }
    }

    static class Joiner implements Runnable {
        final Thread target;

        Joiner(Thread target) {
            this.target = target;
        }

        public void run() {
            try {
                target.join();
            } catch (InterruptedException e) {
            }
        }
    }

    static class Acquirer implements Runnable {
        public void run() {
            try {
                EMPTY.acquire();
            } catch (InterruptedException e) {
            }
        }
    }

    static class TimedAcquirer implements Runnable {
        public void run() {
            try {
                EMPTY.tryAcquire(600, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
            }
        }
    }

    static void interruptMe() {
        Thread.currentThread().interrupt();
    }

    public static void main(String[] args) throws Throwable {
        Object o = new Object();
        Semaphore s = new Semaphore(1);
        Pool pool = new Pool(1);
        Thread done = new Thread(new Sleeper(), "done");
        // --- every exception of every tracked call ---
        expect("wait() unowned", () -> o.wait());
        expect("wait(10) unowned", () -> o.wait(10));
        expect("wait(10, 1) unowned", () -> o.wait(10, 1));
        expect("notify() unowned", () -> o.notify());
        expect("notifyAll() unowned", () -> o.notifyAll());
        expect("wait(-1)", () -> { synchronized (o) { o.wait(-1); } });
        expect("wait(1, -1)", () -> { synchronized (o) { o.wait(1, -1); } });
        expect("wait(1, 1000000)", () -> { synchronized (o) { o.wait(1, 1000000); } });
        expect("wait() interrupted", () -> { synchronized (o) { interruptMe(); o.wait(); } });
        expect("wait(100) interrupted", () -> { synchronized (o) { interruptMe(); o.wait(100); } });
        expect("wait(100, 1) interrupted", () -> { synchronized (o) { interruptMe(); o.wait(100, 1); } });
        expect("sleep(-1)", () -> Thread.sleep(-1));
        expect("sleep(1, -1)", () -> Thread.sleep(1, -1));
        expect("sleep(1, 1000000)", () -> Thread.sleep(1, 1000000));
        expect("sleep(100) interrupted", () -> { interruptMe(); Thread.sleep(100); });
        expect("sleep(100, 1) interrupted", () -> { interruptMe(); Thread.sleep(100, 1); });
        expect("Worker.sleep(-1)", () -> Worker.sleep(-1));
        expect("Worker.sleep(100) interrupted", () -> { interruptMe(); Worker.sleep(100); });
        done.start();
        expect("start() twice", () -> done.start());
        expect("join() interrupted", () -> { interruptMe(); done.join(); });
        expect("join(100) interrupted", () -> { interruptMe(); done.join(100); });
        expect("join(100, 1) interrupted", () -> { interruptMe(); done.join(100, 1); });
        expect("join(-1)", () -> done.join(-1));
        expect("join(1, -1)", () -> done.join(1, -1));
        done.interrupt();
        done.join();
        expect("join() ended", () -> done.join());
        expect("acquire(-1)", () -> s.acquire(-1));
        expect("acquireUninterruptibly(-1)", () -> s.acquireUninterruptibly(-1));
        expect("tryAcquire(-1)", () -> s.tryAcquire(-1));
        expect("tryAcquire(-1, 1, SECONDS)", () -> s.tryAcquire(-1, 1, TimeUnit.SECONDS));
        expect("release(-1)", () -> s.release(-1));
        expect("acquire() interrupted", () -> { interruptMe(); EMPTY.acquire(); });
        expect("acquire(1) interrupted", () -> { interruptMe(); EMPTY.acquire(1); });
        expect("tryAcquire(1, SECONDS) interrupted", () -> { interruptMe(); EMPTY.tryAcquire(1, TimeUnit.SECONDS); });
        expect("tryAcquire(1, 1, SECONDS) interrupted", () -> { interruptMe(); EMPTY.tryAcquire(1, 1, TimeUnit.SECONDS); });
        expect("Pool.acquire(-1)", () -> pool.acquire(-1));
        expect("Pool.acquire() interrupted", () -> { interruptMe(); new Pool(0).acquire(); });
        // --- through reflection and method handles ---
        Method wait = Object.class.getMethod("wait");
        expect("reflect wait() unowned", () -> wait.invoke(o));
        Method sleep = Thread.class.getMethod("sleep", long.class);
        expect("reflect sleep(-1)", () -> sleep.invoke(null, -1L));
        MethodHandle sleepHandle = MethodHandles.lookup()
                .findStatic(Thread.class, "sleep", MethodType.methodType(void.class, long.class));
        expect("handle sleep(-1)", () -> { sleepHandle.invokeExact(-1L); });
        MethodHandle notifyHandle = MethodHandles.lookup()
                .findVirtual(Object.class, "notify", MethodType.methodType(void.class));
        expect("handle notify() unowned", () -> { notifyHandle.invokeExact(o); });
        // --- StackWalker and Throwable inside overrides of tracked methods ---
        pool.tryAcquire();
        pool.release();
        Method release = Semaphore.class.getMethod("release");
        release.invoke(pool);
        Worker w = new Worker("worker");
        w.start();
        w.join();
        // --- threads blocked in tracked calls ---
        Thread target = new Thread(new Sleeper(), "target");
        Thread[] blocked = {
            target,
            new Thread(new SubclassSleeper(), "subclass-sleeper"),
            new Thread(new TimedWaiter(), "timed-waiter"),
            new Thread(new Waiter(), "waiter"),
            new Thread(new Joiner(target), "joiner"),
            new Thread(new Acquirer(), "acquirer"),
            new Thread(new TimedAcquirer(), "timed-acquirer"),
        };
        for (Thread t : blocked) {
            t.start();
            while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
                Thread.onSpinWait();
            }
        }
        for (Thread t : blocked) {
            System.out.println(t.getName() + " getStackTrace:");
            for (StackTraceElement e : t.getStackTrace()) {
                System.out.println("    at " + e);
            }
            System.out.println(t.getName() + " getAllStackTraces:");
            for (StackTraceElement e : Thread.getAllStackTraces().get(t)) {
                System.out.println("    at " + e);
            }
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        if (args.length > 0) {
            System.in.read();
        }
        for (int i = blocked.length - 1; i >= 0; i--) {
            blocked[i].interrupt();
            blocked[i].join();
        }
        System.out.println("END");
    }
}

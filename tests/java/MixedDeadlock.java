import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A real deadlock across the two kinds of lock: thread "juc-first" holds a ReentrantLock and
 * enters synchronized (monitor); thread "monitor-first" holds the monitor and takes the lock.
 * Both are daemons: main waits until both are stuck, prints their identity hashes, and ends.
 *
 * <p>Why main also waits, in JVMTI mode, for the agent's log to show both threads blocked:
 * neither thread's state says that the agent has written its line. HotSpot makes a thread
 * BLOCKED before it posts MonitorContendedEnter, and a parker's blocker is set inside the
 * lock() whose entry the agent is handed; a JVM that exits in between ends the recording
 * without that line, and the test would pass or fail as the scheduler chose. (Instrumentation
 * mode writes a contention still open when the recording stops, so there is no line to wait
 * for before the exit.)
 */
public class MixedDeadlock {
    static final ReentrantLock lock = new ReentrantLock();
    static final Object monitor = new Object();
    static volatile boolean lockHeld, monitorHeld;

    public static void main(String[] args) {
        Thread a = new Thread(() -> {
            lock.lock(); // @juc-first-lock
            lockHeld = true;
            while (!monitorHeld) {
                Thread.onSpinWait();
            }
            synchronized (monitor) { // @juc-first-enter
                lock.unlock();
            }
        }, "juc-first");
        Thread b = new Thread(() -> {
            synchronized (monitor) { // @monitor-first-enter
                monitorHeld = true;
                while (!lockHeld) {
                    Thread.onSpinWait();
                }
                lock.lock(); // @monitor-first-lock
                lock.unlock();
            }
        }, "monitor-first");
        a.setDaemon(true);
        b.setDaemon(true);
        a.start();
        b.start();
        while (a.getState() != Thread.State.BLOCKED || LockSupport.getBlocker(b) == null) {
            Thread.onSpinWait();
        }
        awaitLogged(String.format(",MonitorContendedEnter,%08X,", System.identityHashCode(a)),
                String.format(",LockAcquire,%08X,", System.identityHashCode(b)));
        System.out.printf("deadlocked juc-first=%08X monitor-first=%08X%n",
                System.identityHashCode(a), System.identityHashCode(b));
    }

    /**
     * Waits (up to 60 s) until the agent's event log holds a line containing each of
     * {@code needles}; returns at once unless the agent records in JVMTI mode. It polls
     * with Thread.yield, which the agent does not record (a sleep would be an event).
     */
    static void awaitLogged(String... needles) {
        Path log = null;
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            int eq = arg.indexOf('=');
            if (arg.startsWith("-agentpath:") && arg.contains("liborca") && eq > 0) {
                String[] options = arg.substring(eq + 1).split(",");
                if (java.util.Arrays.asList(options).contains("mode=jvmti")) {
                    log = Path.of(options[0] + ".orca");
                }
            }
        }
        if (log == null) {
            return;
        }
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline) {
            try {
                String text = Files.readString(log);
                boolean all = true;
                for (String n : needles) {
                    all &= text.contains(n);
                }
                if (all) {
                    return;
                }
                long until = System.nanoTime() + 20_000_000L;
                while (System.nanoTime() < until) {
                    Thread.yield();
                }
            } catch (Exception e) {
                break;
            }
        }
        System.err.println("MixedDeadlock: after 60 s " + log + " still lacks one of "
                + String.join(" ", needles));
    }
}

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Contentions on a monitor that only the JDK's code takes: the mutex of a
 * Collections.synchronizedList (the list itself), which java.util's code locks and the
 * agent does not instrument (jdk=no), so the tracker cannot name its owner. ROUNDS times,
 * main holds it inside the list's forEach (JDK code holding the mutex, main's lambda
 * running), lets "taker" call size() and releases it the moment taker is BLOCKED on it:
 * ROUNDS short contentions, each main's. Then one long one, at another site: main keeps it
 * LONG_MS after taker blocked. Prints the hashes the test checks the log against.
 * Usage: java JdkOwners ROUNDS LONG_MS
 */
public class JdkOwners {
    static volatile int round;
    static volatile int taken;
    static final Object mine = new Object();
    static int counter;

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        long longMs = Long.parseLong(args[1]);
        List<Integer> list = Collections.synchronizedList(new ArrayList<>(List.of(1)));
        int listHash = System.identityHashCode(list);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Thread taker = new Thread(() -> {
            // A hold in code the agent rewrites: the tracker has a buffer for taker, so its
            // short contentions are counted, not written.
            synchronized (mine) {
                counter++;
            }
            for (int r = 1; r <= rounds + 1; r++) {
                while (round != r) {
                    Thread.onSpinWait();
                }
                // The long contention at a site of its own (SynchronizedCollection.isEmpty's
                // block, not size's): a site writes at most 5 long contentions a second, and
                // on a loaded machine short rounds can last a millisecond too.
                if (r <= rounds ? list.size() != 1 : list.isEmpty()) {
                    throw new AssertionError();
                }
                taken = r;
            }
        }, "taker");
        taker.start();
        for (int r = 1; r <= rounds + 1; r++) {
            int thisRound = r;
            list.forEach(x -> {
                round = thisRound;
                while (!blockedOn(threads, taker, listHash)) {
                    Thread.onSpinWait();
                }
                if (thisRound > rounds) {
                    try {
                        Thread.sleep(longMs);
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            });
            while (taken != r) {
                Thread.onSpinWait();
            }
        }
        taker.join();
        System.out.printf("list=%08X main=%08X taker=%08X rounds=%d%n", listHash,
                System.identityHashCode(Thread.currentThread()), System.identityHashCode(taker),
                rounds);
    }

    /** Whether `t` is BLOCKED on the monitor hashed `hash` (not on a class's initialisation
     * or another lock: BLOCKED alone does not say). */
    static boolean blockedOn(ThreadMXBean threads, Thread t, int hash) {
        if (t.getState() != Thread.State.BLOCKED) {
            return false;
        }
        ThreadInfo info = threads.getThreadInfo(t.getId());
        return info != null && info.getLockInfo() != null
                && info.getLockInfo().getIdentityHashCode() == hash;
    }
}

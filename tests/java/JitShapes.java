import java.util.concurrent.locks.ReentrantLock;

/**
 * One method per shape of locking code that javac emits and real programs use (Derby's
 * EmbedResultSet.movePosition is a try/finally inside a synchronized block): the JIT test
 * compiles each with C1 and with C2 (-Xcomp) and checks that none is skipped because of what
 * the rewriter inserted. Prints one line the test compares with a run without the agent.
 */
public class JitShapes {
    static final Object L = new Object();
    static final Object M = new Object();
    static final ReentrantLock R = new ReentrantLock();
    static int n;

    static int plain(int i) {
        synchronized (L) {
            n += i;
            return n;
        }
    }

    static int tryFinallyInside(int i) {
        synchronized (L) {
            try {
                n += i;
                return n;
            } finally {
                n--;
            }
        }
    }

    static int tryCatchInside(int i) {
        synchronized (L) {
            try {
                if (i < 0) throw new IllegalStateException();
                return n += i;
            } catch (IllegalStateException e) {
                return -1;
            }
        }
    }

    static int syncInsideTryFinally(int i) {
        try {
            synchronized (L) {
                return n += i;
            }
        } finally {
            n--;
        }
    }

    static int nested(int i) {
        synchronized (L) {
            synchronized (M) {
                try {
                    return n += i;
                } finally {
                    n ^= 1;
                }
            }
        }
    }

    static int loop(int k) {
        int s = 0;
        for (int i = 0; i < k; i++) {
            synchronized (L) {
                if (i == 3) continue;
                if (i == 7) break;
                s += i;
            }
        }
        return s;
    }

    static int throwing(int i) {
        try {
            synchronized (L) {
                if (i >= 0) throw new IllegalArgumentException();
                return i;
            }
        } catch (IllegalArgumentException e) {
            return 1;
        }
    }

    static synchronized int syncMethod(int i) {
        try {
            return n += i;
        } finally {
            n--;
        }
    }

    static int waitNotify(int i) throws InterruptedException {
        synchronized (L) {
            L.notifyAll();
            if (i < 0) L.wait(1);
            return n;
        }
    }

    static int juc(int i) {
        R.lock();
        try {
            return n += i;
        } finally {
            R.unlock();
        }
    }

    public static void main(String[] args) throws Exception {
        long sum = 0;
        for (int i = 0; i < 2000; i++) {
            sum += plain(i) + tryFinallyInside(i) + tryCatchInside(i) + syncInsideTryFinally(i)
                    + nested(i) + loop(10) + throwing(i) + syncMethod(i) + waitNotify(i) + juc(i);
        }
        System.out.println("done " + sum);
    }
}

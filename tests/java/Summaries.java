/**
 * Holds of every kind the summary lines (docs/FORMAT.md, "Summary lines") aggregate, on three
 * threads: nested holds with guards (thread "abc" takes a, b, c; thread "acb" takes a, c, b:
 * a cycle b/c guarded by a), reentrant holds, a synchronized method entered inside blocks,
 * Object.wait inside a nested hold, holds of a few ms, contention on a between "abc" and
 * "acb", and an unguarded cycle (thread "ba" takes b then a, after the others ended, so the
 * program never deadlocks). Used by cli/tests/summaries.rs (through a recorded log).
 */
public class Summaries {
    static final Object a = new Object();
    static final Object b = new Object();
    static final Object c = new Object();
    static final Summaries d = new Summaries();
    static final int N = 30;
    static int counter;

    interface Body {
        void run(int i) throws Exception;
    }

    synchronized void method() {
        counter++;
    }

    static void abc(int i) throws Exception {
        synchronized (a) { // @abc-a
            synchronized (b) { // @abc-b
                synchronized (c) { // @abc-c
                    synchronized (b) {
                        counter++;
                    }
                }
                if (i % 10 == 0) {
                    b.wait(1);
                }
            }
        }
    }

    static void acb(int i) throws Exception {
        synchronized (a) { // @acb-a
            synchronized (c) { // @acb-c
                synchronized (b) { // @acb-b
                    d.method();
                }
            }
            if (i % 10 == 0) {
                Thread.sleep(3);
            }
        }
    }

    static void ba(int i) {
        synchronized (b) { // @ba-b
            synchronized (a) { // @ba-a
                counter++;
            }
        }
        d.method();
    }

    static Thread thread(String name, Body body) {
        return new Thread(() -> {
            try {
                for (int i = 0; i < N; i++) {
                    body.run(i);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        Thread t1 = thread("abc", Summaries::abc);
        Thread t2 = thread("acb", Summaries::acb);
        t1.start();
        t2.start();
        t1.join();
        t2.join();
        Thread t3 = thread("ba", i -> ba(i));
        t3.start();
        t3.join();
        System.out.printf("a=%08X b=%08X c=%08X d=%08X counter=%d%n", System.identityHashCode(a),
                System.identityHashCode(b), System.identityHashCode(c), System.identityHashCode(d),
                counter);
    }
}

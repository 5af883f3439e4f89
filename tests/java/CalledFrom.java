/**
 * Forced short contentions inside a JDK method called from the program: a holder thread takes
 * a StringBuffer's monitor and keeps it until the main thread is BLOCKED on it in
 * `StringBuffer.append`, called from {@link #log} (the line marked @call), ROUNDS times. The
 * contention's site is the JDK's `append`; the program's line is one frame below it (issue 46:
 * the verdict names it as "called from").
 */
public class CalledFrom {
    static final StringBuffer shared = new StringBuffer();
    static final int ROUNDS = 40;
    /** Set just before the call: from then on, the main thread blocks only on `shared`. */
    static volatile boolean calling;

    static void log(String s) {
        shared.append(s); // @call
    }

    public static void main(String[] args) throws Exception {
        Thread main = Thread.currentThread();
        for (int i = 0; i < ROUNDS; i++) {
            Object taken = new Object();
            boolean[] held = {false};
            Thread holder = new Thread(() -> {
                synchronized (shared) {
                    synchronized (taken) {
                        held[0] = true;
                        taken.notifyAll();
                    }
                    while (!calling || main.getState() != Thread.State.BLOCKED) {
                        Thread.onSpinWait();
                    }
                }
            }, "holder");
            holder.start();
            synchronized (taken) {
                while (!held[0]) {
                    taken.wait();
                }
            }
            calling = true;
            log("x");
            calling = false;
            holder.join();
        }
        System.out.println("appended " + shared.length());
    }
}

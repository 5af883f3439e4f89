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
    /** Set by the holder once it holds `shared`: a flag, not a monitor's wait and notify, so
     * that `shared` is the only monitor the main thread ever blocks on (a handshake monitor
     * held by a holder descheduled a few ms on a loaded machine outranked it in the verdict). */
    static volatile boolean held;

    static void log(String s) {
        shared.append(s); // @call
    }

    public static void main(String[] args) throws Exception {
        Thread main = Thread.currentThread();
        for (int i = 0; i < ROUNDS; i++) {
            held = false;
            Thread holder = new Thread(() -> {
                synchronized (shared) {
                    held = true;
                    while (!calling || main.getState() != Thread.State.BLOCKED) {
                        Thread.onSpinWait();
                    }
                }
            }, "holder");
            holder.start();
            while (!held) {
                Thread.onSpinWait();
            }
            calling = true;
            log("x");
            calling = false;
            holder.join();
        }
        System.out.println("appended " + shared.length());
    }
}

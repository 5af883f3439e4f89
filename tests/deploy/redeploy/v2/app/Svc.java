package app;

/** Version 2: more locking before the notify, so that its rewritten offsets differ. */
public class Svc {
    private int hits;
    private final Object extra = new Object();

    synchronized int hit(int i) {
        return hits += i;
    }

    public static int serve(int i) {
        Svc s = new Svc();
        synchronized (s.extra) {
            s.hits++;
        }
        synchronized (s.extra) {
            s.hits--;
        }
        synchronized (s) {
            s.notify(); // @notify
        }
        return s.hit(i) - i + 1;
    }
}

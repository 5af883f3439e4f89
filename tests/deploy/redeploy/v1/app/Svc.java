package app;

/** Version 1 of a deployed service: a synchronized method, a block, a notify. */
public class Svc {
    private int hits;

    synchronized int hit(int i) {
        return hits += i;
    }

    public static int serve(int i) {
        Svc s = new Svc();
        synchronized (s) {
            s.notify(); // @notify
        }
        return s.hit(i) - i + 1;
    }
}

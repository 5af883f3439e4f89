import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/** End-to-end program run original and rewritten (tests/jvm_e2e.rs). */
public class Demo {
    static final Object lock = new Object();
    static int counter;

    static synchronized void sInc() { counter++; }

    synchronized void iInc() { counter++; }

    synchronized int maybeThrow(int x) {
        if (x == 3) {
            throw new IllegalStateException("boom " + x);
        }
        return x;
    }

    static synchronized long sLong(long v) {
        switch ((int) v) {
            case 0: return 10L;
            case 1: return 11L;
            case 7: return 17L;
            default: return v;
        }
    }

    static class MyThread extends Thread {
        @Override public void run() {
            synchronized (lock) { counter++; }
        }
    }

    static String where(Throwable e) {
        StackTraceElement s = e.getStackTrace()[0];
        return s.getMethodName() + ":" + s.getLineNumber();
    }

    public static void main(String[] args) throws Exception {
        Demo d = new Demo();
        for (int i = 0; i < 100; i++) {
            synchronized (lock) {
                synchronized (lock) { counter++; }
            }
            sInc();
            d.iInc();
        }
        try {
            d.maybeThrow(3);
        } catch (IllegalStateException e) {
            System.out.println(e.getMessage() + " at " + where(e));
        }
        try {
            synchronized (lock) {
                if (counter > 0) throw new RuntimeException("in block");
            }
        } catch (RuntimeException e) {
            System.out.println(e.getMessage() + " at " + where(e));
        }
        Thread t = new Thread(() -> {
            synchronized (lock) { lock.notifyAll(); }
        });
        synchronized (lock) {
            t.start();
            lock.wait(20000);
        }
        t.join();
        MyThread mt = new MyThread();
        mt.start();
        mt.join();
        MyThread mt2 = new MyThread();
        mt2.start();
        mt2.join(20000L);
        Thread.sleep(1);
        Semaphore s = new Semaphore(1);
        s.acquire();
        System.out.println("tryAcquire " + s.tryAcquire());
        s.release();
        s.acquireUninterruptibly();
        s.release(1);
        System.out.println("tryAcquire timed " + s.tryAcquire(1, 5, TimeUnit.MILLISECONDS));
        System.out.println("switch " + sLong(0) + " " + sLong(7) + " " + sLong(42));
        System.out.println("counter=" + counter);
        try {
            Object c = Class.forName("orca.OrcaProfilerTracker").getMethod("counts").invoke(null);
            System.err.println("COUNTS " + c);
        } catch (ReflectiveOperationException e) {
            System.err.println("COUNTS none");
        }
    }
}

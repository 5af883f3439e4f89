import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Parity (tests/e2e/parity.rs): every kind of caller of the tracked calls, run in both modes,
 * whose call events must be the same. Subclass owners, overrides calling super, a static
 * call through a subclass, JDK code calling for the program (ThreadPoolExecutor, ForkJoinPool,
 * CompletableFuture), reflection, a method handle, interrupts. Deterministic: every thread is
 * joined before the next case. Prints "subject NAME HASH" for each object the calls name.
 */
public class ParityCalls {
    static class Worker extends Thread {
        Worker(String name) {
            super(name);
        }

        @Override
        public void run() {
            try {
                sleep(1);
            } catch (InterruptedException e) {
            }
        }
    }

    static class Starter extends Thread {
        Starter(String name) {
            super(name);
        }

        @Override
        public synchronized void start() {
            super.start();
        }
    }

    static class Pool extends Semaphore {
        Pool(int permits) {
            super(permits);
        }

        @Override
        public void release() {
            super.release();
        }

        @Override
        public void acquire() throws InterruptedException {
            super.acquire();
        }
    }

    static final Object LOCK = new Object();

    static void subject(String name, Object o) {
        System.out.println(String.format("subject %s %08X", name, System.identityHashCode(o)));
    }

    static class Interrupted implements Runnable {
        final Thread alive;
        final Semaphore empty;

        Interrupted(Thread alive, Semaphore empty) {
            this.alive = alive;
            this.empty = empty;
        }

        public void run() {
            Thread.currentThread().interrupt();
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
            }
            Thread.currentThread().interrupt();
            try {
                Worker.sleep(100);
            } catch (InterruptedException e) {
            }
            synchronized (LOCK) {
                Thread.currentThread().interrupt();
                try {
                    LOCK.wait(100);
                } catch (InterruptedException e) {
                }
                Thread.currentThread().interrupt();
                try {
                    LOCK.wait();
                } catch (InterruptedException e) {
                }
            }
            Thread.currentThread().interrupt();
            try {
                alive.join();
            } catch (InterruptedException e) {
            }
            Thread.currentThread().interrupt();
            try {
                empty.acquire();
            } catch (InterruptedException e) {
            }
            // after the exceptions: calls that return normally
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
            }
        }
    }

    static class Sleeper implements Runnable {
        public void run() {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
            }
        }
    }

    public static void main(String[] args) throws Throwable {
        subject("lock", LOCK);
        // subclass owners, a static call through a subclass, an override calling super
        Worker w = new Worker("worker");
        w.start();
        w.join();
        Worker.sleep(1);
        Starter st = new Starter("starter");
        st.start();
        st.join(10_000);
        Pool pool = new Pool(2);
        subject("pool", pool);
        pool.acquire();
        pool.release();
        pool.tryAcquire();
        pool.tryAcquire(1, TimeUnit.MILLISECONDS);
        pool.release(2);
        pool.acquireUninterruptibly();
        pool.release(3);
        pool.tryAcquire(5, 1, TimeUnit.MILLISECONDS); // fails: 4 permits
        // JDK code calling for the program
        ExecutorService ex = Executors.newFixedThreadPool(2);
        ex.submit(() -> {}).get();
        ex.submit(() -> {}).get();
        ex.shutdown();
        ex.awaitTermination(1, TimeUnit.MINUTES);
        ForkJoinPool fj = new ForkJoinPool(1);
        fj.submit(() -> {}).get();
        fj.shutdown();
        fj.awaitTermination(1, TimeUnit.MINUTES);
        CompletableFuture.runAsync(() -> {}).get();
        CompletableFuture<Integer> one = CompletableFuture.supplyAsync(() -> 1);
        one.get(); // complete: main itself submits the next stage
        one.thenApplyAsync(x -> x + 1).get();
        // a method handle and reflection
        Thread mh = new Thread(() -> {}, "handle");
        MethodHandle start = MethodHandles.lookup()
                .findVirtual(Thread.class, "start", MethodType.methodType(void.class));
        start.invoke(mh);
        mh.join();
        Thread refl = new Thread(() -> {}, "reflection");
        Thread.class.getMethod("start").invoke(refl);
        Thread.class.getMethod("join").invoke(refl);
        Semaphore.class.getMethod("release").invoke(pool);
        Thread.class.getMethod("sleep", long.class).invoke(null, 1L);
        synchronized (LOCK) {
            Object.class.getMethod("wait", long.class).invoke(LOCK, 1L);
            Object.class.getMethod("notify").invoke(LOCK);
            LOCK.notify();
            LOCK.notifyAll();
            LOCK.wait(1);
        }
        // interrupts: every blocking call ending by InterruptedException
        Thread alive = new Thread(new Sleeper(), "alive");
        alive.start();
        Semaphore empty = new Semaphore(0);
        subject("empty", empty);
        Thread in = new Thread(new Interrupted(alive, empty), "interrupted");
        in.start();
        in.join();
        alive.interrupt();
        alive.join();
        System.out.println("parity done");
    }
}

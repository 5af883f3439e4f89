import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A program for `orca attach`: started without the agent, it loops until its standard input
 * says `quit`. Each iteration is one call of `step` (a method called anew each time, so that
 * code rewritten by an attach runs from the next iteration on), which begins and ends with a
 * `Thread.sleep(0)` on lines of their own (the markers the test cuts the log at) and in
 * between takes `lock` three times, `juc` once and waits on `lock` once (a 1 ns timed wait).
 *
 * With the argument `virtual` (JDK 21+) each iteration runs in a virtual thread of its own,
 * which the worker starts and joins.
 *
 * `pause` stops the worker between two iterations and prints `paused N`, N being the
 * number of iterations done (so that a test that attaches or detaches while it is paused
 * knows exactly which iterations ran inside the recording); `go` lets it run on.
 *
 * Besides, from the start: thread "holder" takes `held`, then `jucHeld` twice (a reentrant
 * hold), and keeps them until the input says `release` (so it holds a monitor and one j.u.c.
 * lock across the attach and releases them during the recording),
 * and thread "waiter" waits on `waited` until the input says `wake`. It prints `ready`, then
 * `paused N`, `going`, `released` and `woken` when asked, and `done` at the end.
 */
public class AttachLoop {
    static final Object lock = new Object();
    static final ReentrantLock juc = new ReentrantLock();
    static final Object held = new Object();
    static final ReentrantLock jucHeld = new ReentrantLock();
    static final Object waited = new Object();
    static final java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    static final java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
    static volatile boolean wake;
    static volatile boolean quit;
    static final Object pauseLock = new Object();
    static boolean pause;
    static boolean paused;
    static int done;
    static long sum;

    static void step(int i) throws InterruptedException {
        Thread.sleep(0); // begin marker
        for (int k = 0; k < 3; k++) {
            synchronized (lock) {
                sum += i + k;
            }
        }
        juc.lock();
        try {
            sum -= i;
        } finally {
            juc.unlock();
        }
        synchronized (lock) {
            lock.wait(0, 1);
        }
        Thread.sleep(0); // end marker
    }

    /** One iteration, in a new virtual thread (JDK 21+, by reflection: this file is Java 11). */
    static void stepVirtual(int i) throws Exception {
        Runnable r = () -> {
            try {
                step(i);
            } catch (InterruptedException e) {
                // ends the iteration
            }
        };
        Thread t = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, r);
        t.join();
    }

    public static void main(String[] args) throws Exception {
        boolean virtual = args.length > 0 && args[0].equals("virtual");
        Thread holder = new Thread(() -> {
            synchronized (held) {
                jucHeld.lock();
                jucHeld.lock();
                try {
                    holding.countDown();
                    gate.await();
                } catch (InterruptedException e) {
                    // ends the thread
                } finally {
                    jucHeld.unlock();
                    jucHeld.unlock();
                }
            }
        }, "holder");
        holder.start();
        Thread waiter = new Thread(() -> {
            synchronized (waited) {
                while (!wake) {
                    try {
                        waited.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "waiter");
        waiter.start();
        Thread worker = new Thread(() -> {
            try {
                for (int i = 0; !quit; i++) {
                    synchronized (pauseLock) {
                        if (pause) {
                            done = i;
                            paused = true;
                            pauseLock.notifyAll();
                            while (pause) {
                                pauseLock.wait();
                            }
                            paused = false;
                        }
                    }
                    if (virtual) {
                        stepVirtual(i);
                    } else {
                        step(i);
                    }
                }
            } catch (Exception e) {
                // ends the loop (InterruptedException)
            }
        }, "worker");
        worker.start();
        holding.await(); // "ready" once the holds exist
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("release")) {
                gate.countDown();
                holder.join();
                System.out.println("released");
            } else if (line.equals("wake")) {
                synchronized (waited) {
                    wake = true;
                    waited.notifyAll();
                }
                waiter.join();
                System.out.println("woken");
            } else if (line.equals("pause")) {
                int n;
                synchronized (pauseLock) {
                    pause = true;
                    while (!paused) {
                        pauseLock.wait();
                    }
                    n = done;
                }
                System.out.println("paused " + n);
            } else if (line.equals("go")) {
                synchronized (pauseLock) {
                    pause = false;
                    pauseLock.notifyAll();
                }
                System.out.println("going");
            } else if (line.equals("quit")) {
                break;
            }
            System.out.flush();
        }
        quit = true;
        worker.join();
        System.out.println("done");
    }
}

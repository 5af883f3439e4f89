/**
 * Known numbers of monitor operations: plain, reentrant, exited by exception, synchronized
 * methods (instance and static, normal and exceptional exit). Prints the identity hashes of
 * the monitors and a stack trace thrown through a synchronized block.
 */
public class Monitors {
    static final int N = 50;
    final Object a = new Object();
    final Object b = new Object();
    final Object c = new Object();

    synchronized void instanceSync() {
    }

    static synchronized void staticSync() {
    }

    synchronized void throwsInside(int i) {
        if (i >= 0) {
            throw new IllegalStateException("inside " + i);
        }
    }

    static void fail() {
        throw new UnsupportedOperationException("thrown through a monitor"); // @fail
    }

    public static void main(String[] args) {
        Monitors m = new Monitors();
        int caught = 0;
        for (int i = 0; i < N; i++) {
            synchronized (m.a) {
                caught += 0;
            }
        }
        for (int i = 0; i < N; i++) {
            synchronized (m.b) {
                synchronized (m.b) {
                    caught += 0;
                }
            }
        }
        for (int i = 0; i < N; i++) {
            m.instanceSync();
            staticSync();
        }
        for (int i = 0; i < N; i++) {
            try {
                synchronized (m.a) {
                    if (i >= 0) {
                        throw new RuntimeException("block " + i);
                    }
                }
            } catch (RuntimeException e) {
                caught++;
            }
            try {
                m.throwsInside(i);
            } catch (IllegalStateException e) {
                caught++;
            }
        }
        try {
            synchronized (m.c) {
                fail();
            }
        } catch (UnsupportedOperationException e) {
            e.printStackTrace(System.out);
        }
        System.out.printf("caught=%d a=%08X b=%08X c=%08X m=%08X class=%08X%n", caught,
                System.identityHashCode(m.a), System.identityHashCode(m.b), System.identityHashCode(m.c),
                System.identityHashCode(m), System.identityHashCode(Monitors.class));
    }
}

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.util.function.IntSupplier;

/** A hidden class (Lookup.defineHiddenClass) with a synchronized method and block, 4 threads. */
public class UnusualHidden {
    public static void main(String[] args) throws Exception {
        byte[] bytes;
        try (InputStream in = UnusualHidden.class.getResourceAsStream("HiddenWork.class")) {
            bytes = in.readAllBytes();
        }
        MethodHandles.Lookup l = MethodHandles.lookup()
                .defineHiddenClass(bytes, true, MethodHandles.Lookup.ClassOption.NESTMATE);
        Class<?> c = l.lookupClass();
        IntSupplier w = (IntSupplier) c.getDeclaredConstructor().newInstance();
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 500; k++) {
                    w.getAsInt();
                }
            }, "hidden-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("hidden: " + c.isHidden() + ", named like HiddenWork: "
                + c.getName().startsWith("HiddenWork/"));
        System.out.println("hidden total " + w.getAsInt());
    }
}

/** Loaded only as a hidden class (its bytes are read as a resource). */
class HiddenWork implements IntSupplier {
    private final Object lock = new Object();
    private int count;

    @Override
    public synchronized int getAsInt() {
        synchronized (lock) {
            count++;
            lock.notifyAll();
        }
        return count;
    }
}

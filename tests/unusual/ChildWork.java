import java.util.function.IntSupplier;

/** Found by both the application loader and UnusualChildFirst's child-first loader. */
public class ChildWork implements IntSupplier {
    private static final Object LOCK = new Object();
    private int count;

    @Override
    public int getAsInt() {
        synchronized (LOCK) {
            count++;
            LOCK.notifyAll();
            return count;
        }
    }
}

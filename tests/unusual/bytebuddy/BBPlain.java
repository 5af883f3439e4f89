/** Redefined by Byte Buddy (BBAdvice inlined into work) before it is ever loaded. */
public class BBPlain {
    public static long sum;

    public static void work(Object lock, int k) {
        synchronized (BBPlain.class) {
            sum += k;
        }
    }
}

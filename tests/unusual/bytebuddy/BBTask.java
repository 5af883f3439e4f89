/** Rebased by Byte Buddy before it is ever loaded: run is renamed and BBInterceptor put first. */
public class BBTask {
    public static long total;

    public int run(int k) {
        synchronized (BBTask.class) { // @bb-task-block
            total += k;
        }
        return k;
    }
}

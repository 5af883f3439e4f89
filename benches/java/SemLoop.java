import java.util.concurrent.Semaphore;
/** GetLocalInstance cost in JVMTI mode (docs/MODES.md, "What JVMTI event mode costs"): `java -Xlog:safepoint:file=sp.log -agentpath:liborca.so=p,mode=jvmti SemLoop 20000`. */
public class SemLoop {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        Semaphore s = new Semaphore(0);
        Object o = new Object();
        for (int w = 0; w < 2; w++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) { s.release(); }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) { synchronized (o) { o.notify(); } }
            long t2 = System.nanoTime();
            System.out.printf("round %d: release %.2f us/call, notify %.2f us/call%n", w, (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n);
        }
    }
}

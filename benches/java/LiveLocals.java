import java.lang.reflect.Method;
import java.util.Optional;
/** JVMTI mode, a receiver without a VM operation? (docs/MODES.md, "What JVMTI event mode costs"): `java --add-opens java.base/java.lang=ALL-UNNAMED -Xint LiveLocals 20000`. */
public class LiveLocals {
    static StackWalker W;
    static Method getLocals;
    static Object receiverOfCaller() {
        Optional<StackWalker.StackFrame> f = W.walk(s -> s.skip(1).findFirst());
        try { return ((Object[]) getLocals.invoke(f.get()))[0]; } catch (Exception e) { throw new RuntimeException(e); }
    }
    static class Target { Object release() { return receiverOfCaller(); } }
    public static void main(String[] a) throws Exception {
        Method m = Class.forName("java.lang.LiveStackFrame").getMethod("getStackWalker");
        m.setAccessible(true);
        W = (StackWalker) m.invoke(null);
        getLocals = Class.forName("java.lang.LiveStackFrameInfo").getDeclaredMethod("getLocals");
        getLocals.setAccessible(true);
        Target t = new Target();
        int n = Integer.parseInt(a[0]);
        for (int r = 0; r < 2; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) { if (t.release() != t) throw new AssertionError(); }
            System.out.printf("round %d: %.2f us/call%n", r, (System.nanoTime() - t0) / 1e3 / n);
        }
    }
}

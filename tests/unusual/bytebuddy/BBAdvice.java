import net.bytebuddy.asm.Advice;

/** Inlined by Byte Buddy at the start of BBPlain.work. */
public class BBAdvice {
    public static int entries;

    @Advice.OnMethodEnter
    public static void enter(@Advice.Argument(0) Object lock) {
        synchronized (lock) {
            entries++;
            lock.notifyAll();
        }
    }
}

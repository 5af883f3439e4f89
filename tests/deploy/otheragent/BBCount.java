import net.bytebuddy.asm.Advice;

/** Advice Byte Buddy inlines at the start of BBTarget.work: counts the calls. */
public class BBCount {
    public static int entries;

    @Advice.OnMethodEnter
    static void enter() {
        entries++;
    }
}

import net.bytebuddy.implementation.bind.annotation.This;

/** The target of BBCounter.getAsInt's delegation: runs holding the BBCounter's monitor. */
public class BBDelegate {
    public static int calls;

    public static int next(@This Object self) {
        calls++;
        self.notifyAll();
        return calls;
    }
}

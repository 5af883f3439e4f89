/**
 * A program that locks more fresh objects than the agent names (COUNT of them, each once,
 * which the tracker sees taken), then notifies LATER fresh objects of a class of its own, each
 * inside its own synchronized block (with notifies=events each notify is an event naming its
 * object). Those must all be named: the tracker's monitors take at most half of the agent's
 * table of names.
 * Usage: NamedLater COUNT LATER
 */
public class NamedLater {
    static final class Late {}

    static long counter;

    public static void main(String[] args) {
        int count = Integer.parseInt(args[0]);
        int later = Integer.parseInt(args[1]);
        for (int i = 0; i < count; i++) {
            Object fresh = new Object();
            synchronized (fresh) {
                counter++;
            }
        }
        for (int i = 0; i < later; i++) {
            Late late = new Late();
            synchronized (late) {
                late.notify(); // @late-notify
            }
        }
        System.out.println("counter=" + counter);
    }
}

/**
 * A lock-order cycle in a busy program, under guards=on past the agent's exact budget (issue
 * 45): `main` first takes `warm` 1,500,000 times (a million holds pass the budget), then thread
 * "A" takes a then b `n` times, and once it has ended thread "B" takes b then a `n` times, so
 * the program never deadlocks but could. Each outermost hold is in the sample one time in 16:
 * with n = 2000 the pair is seen with probability 1 - (15/16)^2000.
 * Usage: GuardedOrder N
 */
public class GuardedOrder {
    static final Object warm = new Object();
    static final Object a = new Object();
    static final Object b = new Object();
    static long counter;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        for (int i = 0; i < 1_500_000; i++) {
            synchronized (warm) {
                counter += i & 3;
            }
        }
        Thread first = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                synchronized (a) { // @a-outer
                    synchronized (b) {
                        counter++;
                    }
                }
            }
        }, "A");
        Thread second = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                synchronized (b) { // @b-outer
                    synchronized (a) {
                        counter++;
                    }
                }
            }
        }, "B");
        first.start();
        first.join();
        second.start();
        second.join();
        System.out.println(counter);
    }
}

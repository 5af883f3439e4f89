/**
 * Holds monitor `outer` while it takes monitor `inner` from 16^4 = 65,536 different stacks
 * (four levels of a method with 16 call sites): many more than the agent's per-thread table
 * of interned stacks holds (4,096), so that table starts over while `outer` is held. Prints
 * the count.
 */
public class ManyStacks {
    static final Object outer = new Object();
    static final Object inner = new Object();
    static long count;

    static void level(int d, int k) {
        if (d == 0) {
            synchronized (inner) {
                count++;
            }
            return;
        }
        int next = k >>> 4;
        switch (k & 15) {
            case 0: level(d - 1, next); break;
            case 1: level(d - 1, next); break;
            case 2: level(d - 1, next); break;
            case 3: level(d - 1, next); break;
            case 4: level(d - 1, next); break;
            case 5: level(d - 1, next); break;
            case 6: level(d - 1, next); break;
            case 7: level(d - 1, next); break;
            case 8: level(d - 1, next); break;
            case 9: level(d - 1, next); break;
            case 10: level(d - 1, next); break;
            case 11: level(d - 1, next); break;
            case 12: level(d - 1, next); break;
            case 13: level(d - 1, next); break;
            case 14: level(d - 1, next); break;
            default: level(d - 1, next); break;
        }
    }

    public static void main(String[] args) {
        synchronized (outer) { // @outer-enter
            for (int k = 0; k < 1 << 16; k++) {
                level(4, k);
            }
        }
        System.out.printf("outer=%08X count=%d%n", System.identityHashCode(outer), count);
    }
}

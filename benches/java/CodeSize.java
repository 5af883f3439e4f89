/**
 * The machine code the JIT makes for one `synchronized` block and one `synchronized` method,
 * each a method of its own (benches/codesize keeps them from being inlined into the loop and
 * reads their C2 code size from -XX:+LogCompilation): what the agent's inserted code costs per
 * site in compiled code, a figure that does not depend on the machine's load.
 * Usage: java CodeSize ITERATIONS
 */
public class CodeSize {
    static long v;

    static long block(Object o, long x) {
        synchronized (o) {
            return x + 1;
        }
    }

    static synchronized void method() {
        v++;
    }

    public static void main(String[] args) {
        long x = 0;
        Object o = new Object();
        for (int i = Integer.parseInt(args[0]); i > 0; i--) {
            x = block(o, x);
            method();
        }
        System.out.println(x + v);
    }
}

/**
 * Call-heavy, lock-light: recursive and virtual calls (small methods the JIT would inline),
 * 2 threads, one synchronized update per 100,000 calls or so. This is where JVMTI
 * MethodEntry/MethodExit events cost the most. Usage: java CallHeavy SCALE, or java CallHeavy
 * steady WARMUP_S MEASURE_S (rounds of fib(20) per second after the warm-up; see Steady)
 */
public class CallHeavy {
    static final Object lock = new Object();
    static long total;

    interface Shape { double area(); }
    record Square(double s) implements Shape { public double area() { return s * s; } }
    record Circle(double r) implements Shape { public double area() { return 3.14159 * r * r; } }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static double areas(Shape[] shapes) {
        double a = 0;
        for (Shape s : shapes) a += s.area();
        return a;
    }

    static void work(int slot, long rounds) {
        Shape[] shapes = new Shape[64];
        for (int i = 0; i < shapes.length; i++) {
            shapes[i] = (i & 1) == 0 ? new Square(i) : new Circle(i);
        }
        for (long r = 0; r < rounds; r++) {
            long v = fib(20) + (long) areas(shapes);
            synchronized (lock) {
                total += v;
            }
            Steady.done(slot, r + 1);
        }
    }

    public static void main(String[] args) throws Exception {
        boolean steady = Steady.requested(args, 0);
        int scale = steady ? 0 : args.length > 0 ? Integer.parseInt(args[0]) : 1;
        long rounds = steady ? Long.MAX_VALUE : 100L * scale;
        Thread a = new Thread(() -> work(0, rounds), "calls-a");
        Thread b = new Thread(() -> work(1, rounds), "calls-b");
        a.start();
        b.start();
        if (steady) {
            Steady.measure(args, 0, "rounds");
        }
        a.join();
        b.join();
        System.out.println("total=" + total);
    }
}

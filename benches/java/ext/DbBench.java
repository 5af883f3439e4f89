import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;

/**
 * An embedded SQL database under several JDBC client threads: Apache Derby (Debian's
 * libderby-java) or H2 (libh2-java), in memory, so that the disk does not add its own noise.
 * Each of THREADS threads opens its own connection and runs TXNS transactions in all (split
 * between the threads) of a small bank: read two account balances, move an amount between
 * them (two updates, rows locked in id order), insert a history row, commit; every 10th
 * transaction first reads 10 more accounts. A transaction the database rolls back (deadlock,
 * lock timeout) is retried. At the end the total balance is checked.
 * Usage: java -cp classes:DRIVER_JAR DbBench derby|h2 THREADS TXNS
 *
 * Steady state: java ... DbBench derby|h2 THREADS steady WARMUP_S|Ncpu MEASURE_S. The clients run
 * transactions for WARMUP_S seconds (the JIT and the caches settle), then for MEASURE_S more,
 * and the program prints the transactions completed in that second window per second, as
 * `throughput: N ops/s` (the line `orca bench --rate` reads). A server runs for days: its
 * steady state is what a profiler costs it, not the first seconds under the JIT.
 * WARMUP_S given as `Ncpu` (`16cpu`) ends the warm-up when the JVM has used N CPU-seconds
 * (start-up included) instead: on a loaded machine 8 wall seconds may leave the JIT far from
 * done, with the agent and without it alike, and the window then measures the warm-up.
 * It also prints `window cpu: ...`: the JVM's CPU in the window (and the client threads'
 * share), transactions per CPU-second and CPU per transaction, which a loaded machine
 * stretches far less than wall time. -Ddbbench.series=true prints on stderr, every second,
 * the JVM's CPU and the transactions so far: whether the warm-up had ended.
 */
public class DbBench {
    static final int ACCOUNTS = 1000;
    static final long START = 1_000_000;

    static String url(String db) {
        switch (db) {
            case "derby":
                return "jdbc:derby:memory:orcabench;create=true";
            case "h2":
                return "jdbc:h2:mem:orcabench;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
            default:
                throw new IllegalArgumentException("database must be derby or h2: " + db);
        }
    }

    public static void main(String[] args) throws Exception {
        String db = args[0];
        int threads = Integer.parseInt(args[1]);
        boolean steady = args[2].equals("steady");
        int txns = steady ? 0 : Integer.parseInt(args[2]);
        if (steady) {
            long now = System.nanoTime();
            measureSpan = (long) (Double.parseDouble(args[4]) * 1e9);
            if (args[3].endsWith("cpu")) {
                // Ends when the JVM has used that much CPU: Window.measure sets both ends.
                warmupCpu = (long) (Double.parseDouble(args[3].substring(0, args[3].length() - 3)) * 1e9);
                warmupEnd = measureEnd = Long.MAX_VALUE;
            } else {
                warmupEnd = now + (long) (Double.parseDouble(args[3]) * 1e9);
                measureEnd = warmupEnd + measureSpan;
            }
        }
        // Derby writes derby.log into the working directory unless told otherwise.
        System.setProperty("derby.stream.error.file", "/dev/null");
        // A wait that is not a detected deadlock fails after 20 s rather than hanging.
        System.setProperty("derby.locks.waitTimeout", "20");
        String url = url(db);
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE account (id INT PRIMARY KEY, balance BIGINT NOT NULL, name VARCHAR(40))");
            s.executeUpdate("CREATE TABLE history (id INT NOT NULL, src INT NOT NULL, dst INT NOT NULL, amount BIGINT NOT NULL, note VARCHAR(40))");
            c.setAutoCommit(false);
            try (PreparedStatement p = c.prepareStatement("INSERT INTO account VALUES (?, ?, ?)")) {
                for (int i = 0; i < ACCOUNTS; i++) {
                    p.setInt(1, i);
                    p.setLong(2, START);
                    p.setString(3, "account " + i);
                    p.executeUpdate();
                }
            }
            c.commit();
        }
        Thread[] ts = new Thread[threads];
        long[] retries = new long[threads];
        Throwable[] failed = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            final int n = steady ? Integer.MAX_VALUE : txns / threads + (t < txns % threads ? 1 : 0);
            ts[t] = new Thread(() -> {
                try {
                    retries[id] = client(url, id, n);
                } catch (Throwable e) {
                    synchronized (failed) {
                        failed[0] = e;
                    }
                }
            }, "client-" + t);
            ts[t].start();
        }
        Window w = steady ? Window.measure() : null;
        for (Thread t : ts) t.join();
        if (failed[0] != null) throw new RuntimeException("a client failed", failed[0]);
        long total, rows;
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            try (ResultSet r = s.executeQuery("SELECT SUM(balance) FROM account")) {
                r.next();
                total = r.getLong(1);
            }
            try (ResultSet r = s.executeQuery("SELECT COUNT(*) FROM history")) {
                r.next();
                rows = r.getLong(1);
            }
        }
        long done = 0;
        for (long x : completed) done += x;
        if (total != START * ACCOUNTS || rows != (steady ? done : txns)) {
            throw new AssertionError("total " + total + ", history rows " + rows);
        }
        long r = 0;
        for (long x : retries) r += x;
        if (steady) {
            long measured = 0;
            for (long x : inWindow) measured += x;
            double secs = (measureEnd - warmupEnd) / 1e9;
            System.out.printf("throughput: %.1f ops/s%n", measured / secs);
            System.out.println(db + ": " + done + " transactions, " + threads + " threads, " + r
                    + " retried, " + measured + " in the measured " + secs + " s");
            System.out.println(w.report(measured));
        } else {
            System.out.println(db + ": " + txns + " transactions, " + threads + " threads, " + r + " retried");
        }
        if (db.equals("derby")) {
            try {
                DriverManager.getConnection("jdbc:derby:;shutdown=true");
            } catch (SQLException expected) {
                // Derby reports a clean shutdown as an exception.
            }
        }
    }

    /** Steady state: when the warm-up and the measured window end (System.nanoTime). */
    static volatile long warmupEnd, measureEnd;
    /** The measured window's length; the warm-up in the JVM's CPU nanoseconds, or 0. */
    static long measureSpan, warmupCpu;
    static final long[] completed = new long[16 * 64];
    static final long[] inWindow = new long[16 * 64];

    /**
     * The CPU the measured window took: the whole JVM's (the agent's threads, the JIT and the
     * GC included) and the client threads' own. Transactions per CPU-second of the window
     * compare builds on a loaded machine, where transactions per second mostly measure the
     * other processes; the split says whether a difference is in the clients' own code.
     */
    static final class Window {
        long cpu0, cpu1;

        static Window measure() throws InterruptedException {
            Window w = new Window();
            if (Boolean.getBoolean("dbbench.series")) {
                Thread s = new Thread(() -> {
                    try {
                        series();
                    } catch (InterruptedException e) {
                    }
                }, "series");
                s.setDaemon(true);
                s.start();
            }
            if (warmupCpu > 0) {
                long t0 = System.nanoTime();
                while (processCpu() < warmupCpu) {
                    Thread.sleep(10);
                }
                long now = System.nanoTime();
                measureEnd = now + measureSpan;
                warmupEnd = now;
                System.out.printf("warm-up: %.1f s for %.1f cpu-seconds%n", (now - t0) / 1e9, warmupCpu / 1e9);
            }
            sleepUntil(warmupEnd);
            w.cpu0 = processCpu();
            sleepUntil(measureEnd);
            w.cpu1 = processCpu();
            return w;
        }

        /**
         * -Ddbbench.series=true: every second until the window ends, the process CPU and the
         * transactions so far, on stderr: how long the JIT takes to settle, in the JVM's own
         * CPU-seconds (which a loaded machine does not stretch, as it does wall seconds).
         */
        static void series() throws InterruptedException {
            long t0 = System.nanoTime(), c0 = processCpu();
            for (int i = 1; t0 + i * 1_000_000_000L < measureEnd; i++) {
                sleepUntil(t0 + i * 1_000_000_000L);
                long done = 0;
                for (int t = 0; t < completed.length; t += 16) done += completed[t];
                System.err.printf("series: %d s, cpu %.2f s, %d transactions%n", i,
                        (processCpu() - c0) / 1e9, done);
            }
        }

        static void sleepUntil(long deadline) throws InterruptedException {
            for (long left; (left = deadline - System.nanoTime()) > 0; ) {
                Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
            }
        }

        static long processCpu() {
            return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                    .getProcessCpuTime();
        }

        String report(long measured) {
            long clients = 0;
            for (int t = 0; t < clientCpu.length / 16; t++) {
                clients += clientCpu[t * 16 + 1] - clientCpu[t * 16];
            }
            double cpu = (cpu1 - cpu0) / 1e9;
            return String.format("window cpu: %.2f s (clients %.2f s), %.0f transactions per cpu-second, %.1f us cpu per transaction",
                    cpu, clients / 1e9, measured / cpu, cpu * 1e6 / measured);
        }
    }

    /** Each client's thread CPU time when it saw the window begin and end (16 longs apart). */
    static final long[] clientCpu = new long[16 * 64];

    static long client(String url, int id, int n) throws SQLException {
        long retried = 0;
        long seed = 0x9E3779B97F4A7C15L * (id + 1);
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            PreparedStatement get = c.prepareStatement("SELECT balance FROM account WHERE id = ?");
            PreparedStatement upd = c.prepareStatement("UPDATE account SET balance = balance + ? WHERE id = ?");
            PreparedStatement ins = c.prepareStatement("INSERT INTO history VALUES (?, ?, ?, ?, ?)");
            for (int i = 0; i < n; i++) {
                if (n == Integer.MAX_VALUE) {
                    long now = System.nanoTime();
                    if (now >= warmupEnd && clientCpu[id * 16] == 0) {
                        clientCpu[id * 16] = threadCpu();
                    }
                    if (now >= measureEnd) {
                        clientCpu[id * 16 + 1] = threadCpu();
                        break;
                    }
                }
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                int a = (int) ((seed >>> 33) % ACCOUNTS);
                int b = (int) ((seed >>> 13) % ACCOUNTS);
                if (a == b) b = (b + 1) % ACCOUNTS;
                long amount = 1 + ((seed >>> 40) & 63);
                while (true) {
                    try {
                        if (i % 10 == 0) {
                            // A small report: the 10 accounts from a, read one by one by key
                            // (a range scan may lock rows the other clients hold).
                            for (int k = 0; k < 10; k++) balance(get, (a + k) % ACCOUNTS);
                        }
                        long ba = balance(get, a), bb = balance(get, b);
                        if (ba < amount) amount = 0;
                        // Lock rows in id order: fewer deadlocks.
                        int lo = Math.min(a, b), hi = Math.max(a, b);
                        update(upd, lo, lo == a ? -amount : amount);
                        update(upd, hi, hi == a ? -amount : amount);
                        ins.setInt(1, id * 10_000_000 + i);
                        ins.setInt(2, a);
                        ins.setInt(3, b);
                        ins.setLong(4, amount);
                        ins.setString(5, "t" + id + " " + (ba + bb));
                        ins.executeUpdate();
                        c.commit();
                        // One cache line per client (16 longs apart): no false sharing.
                        completed[id * 16]++;
                        if (n == Integer.MAX_VALUE) {
                            long t = System.nanoTime();
                            if (t >= warmupEnd && t < measureEnd) {
                                inWindow[id * 16]++;
                            }
                        }
                        break;
                    } catch (SQLTransactionRollbackException e) {
                        c.rollback();
                        retried++;
                    }
                }
            }
        }
        return retried;
    }

    static long threadCpu() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    static long balance(PreparedStatement get, int id) throws SQLException {
        get.setInt(1, id);
        try (ResultSet r = get.executeQuery()) {
            r.next();
            return r.getLong(1);
        }
    }

    static void update(PreparedStatement upd, int id, long delta) throws SQLException {
        upd.setLong(1, delta);
        upd.setInt(2, id);
        if (upd.executeUpdate() != 1) throw new SQLException("no account " + id);
    }
}

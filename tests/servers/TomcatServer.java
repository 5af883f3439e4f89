import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * Embedded Tomcat 10 (Debian's libtomcat10-embed-java) on 127.0.0.1:PORT, for the attach
 * tests. Each request does what a servlet does with shared state: a `synchronized` update of a
 * hit-count map and a `ReentrantLock`-guarded counter, then a short reply; the rest is
 * Tomcat's own work (its executor, NIO poller and request processing). Prints "listening on"
 * once it serves; runs until SIGTERM.
 * Usage: java -cp classes:/usr/share/java/tomcat10-embed-core.jar TomcatServer PORT [THREADS]
 */
public class TomcatServer {
    static final Map<String, Long> hits = new HashMap<>();
    static final ReentrantLock totalLock = new ReentrantLock();
    static long total;

    static long hit(String path) {
        synchronized (hits) {
            return hits.merge(path, 1L, Long::sum);
        }
    }

    static void count() {
        totalLock.lock();
        try {
            total++;
        } finally {
            totalLock.unlock();
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(System.getProperty("java.io.tmpdir") + "/orca-tomcat-" + port);
        Connector c = new Connector();
        c.setPort(port);
        c.setProperty("address", "127.0.0.1");
        c.setProperty("maxThreads", Integer.toString(threads));
        tomcat.getService().addConnector(c);
        tomcat.setConnector(c);
        Context ctx = tomcat.addContext("", null);
        Tomcat.addServlet(ctx, "hit", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                long n = hit(req.getRequestURI());
                count();
                resp.setStatus(200);
                resp.setContentType("text/plain");
                resp.getWriter().print("hello " + req.getRequestURI() + " " + n + "\n");
            }
        });
        ctx.addServletMappingDecoded("/*", "hit");
        tomcat.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                tomcat.stop();
            } catch (Exception e) {
                // stopping anyway
            }
        }));
        System.out.println("listening on 127.0.0.1:" + port);
        tomcat.getServer().await();
    }
}

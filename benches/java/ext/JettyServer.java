import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Embedded Jetty 9 (Debian's libjetty9-java) on 127.0.0.1:PORT, for `orca bench --load`.
 * Each request does what a typical servlet does with shared state: one `synchronized` update
 * of a hit-count map keyed by path, then a short text reply; the rest is Jetty's own work
 * (its thread pool, selector, connection and buffer handling). Runs until SIGTERM; Jetty stops
 * from a shutdown hook.
 * Usage: java -cp classes:JETTY_JARS JettyServer PORT [THREADS]
 */
public class JettyServer {
    static final Map<String, Long> hits = new HashMap<>();

    static long hit(String path) {
        synchronized (hits) {
            return hits.merge(path, 1L, Long::sum);
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        Server server = new Server(new QueuedThreadPool(threads, Math.min(threads, 8)));
        ServerConnector c = new ServerConnector(server);
        c.setHost("127.0.0.1");
        c.setPort(port);
        server.addConnector(c);
        server.setHandler(new AbstractHandler() {
            @Override
            public void handle(String target, Request base, HttpServletRequest req,
                               HttpServletResponse resp) throws IOException {
                long n = hit(target);
                resp.setStatus(200);
                resp.setContentType("text/plain");
                resp.getWriter().print("hello " + target + " " + n + "\n");
                base.setHandled(true);
            }
        });
        server.setStopAtShutdown(true);
        server.start();
        System.out.println("listening on 127.0.0.1:" + port);
        server.join();
    }
}

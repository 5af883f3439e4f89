import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A server redeploying an application: args[2] times, a new class loader loads app.Svc from
 * args[0] or args[1] in turn (two versions of the same class), runs it, and is dropped; a
 * collection every 100 deployments unloads the dropped ones. Prints the resident set size at
 * the 100th deployment and at the end.
 */
public class Redeploy {
    public static void main(String[] args) throws Exception {
        URL[][] versions = {
            {Path.of(args[0]).toUri().toURL()}, {Path.of(args[1]).toUri().toURL()}
        };
        int n = Integer.parseInt(args[2]);
        ClassLoader parent = ClassLoader.getPlatformClassLoader();
        long sum = 0;
        long rssAt100 = 0;
        for (int i = 1; i <= n; i++) {
            try (URLClassLoader loader = new URLClassLoader(versions[i % 2], parent)) {
                Class<?> svc = loader.loadClass("app.Svc");
                sum += (Integer) svc.getMethod("serve", int.class).invoke(null, i);
            }
            if (i % 100 == 0) {
                System.gc();
                if (i == 100) {
                    rssAt100 = rss();
                }
            }
        }
        System.gc();
        Thread.sleep(300);
        System.out.println("sum " + sum);
        System.err.println("rss-kb " + rssAt100 + " " + rss());
    }

    static long rss() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }
}

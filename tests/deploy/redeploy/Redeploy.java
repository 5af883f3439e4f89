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
        // Each deployment is loaded before the previous one first runs, as a server starts
        // the new version before it retires the old one: the old class's methods are first
        // seen after another loader defined a class of the same name.
        URLClassLoader previous = null;
        for (int i = 1; i <= n + 1; i++) {
            URLClassLoader loader = null;
            if (i <= n) {
                loader = new URLClassLoader(versions[i % 2], parent);
                loader.loadClass("app.Svc");
            }
            if (previous != null) {
                Class<?> svc = previous.loadClass("app.Svc");
                sum += (Integer) svc.getMethod("serve", int.class).invoke(null, i - 1);
                previous.close();
            }
            previous = loader;
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

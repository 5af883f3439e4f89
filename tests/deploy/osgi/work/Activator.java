package work;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;

/** Runs the workload when the bundle starts, on the framework's thread. */
public class Activator implements BundleActivator {
    public void start(BundleContext context) throws Exception {
        System.out.println("bundle " + Worker.run());
    }

    public void stop(BundleContext context) {
        System.out.println("bundle stopped");
    }
}

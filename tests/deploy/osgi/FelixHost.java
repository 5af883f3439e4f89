import java.util.HashMap;
import java.util.Map;

import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.Bundle;
import org.osgi.framework.launch.Framework;

/**
 * Embeds Apache Felix with its default configuration (no boot delegation beyond java.*),
 * installs the bundle args[1] and starts and stops it; args[0] is the framework's cache.
 */
public class FelixHost {
    public static void main(String[] args) throws Exception {
        Map<String, String> config = new HashMap<>();
        config.put("org.osgi.framework.storage", args[0]);
        config.put("org.osgi.framework.storage.clean", "onFirstInit");
        Framework framework = new FrameworkFactory().newFramework(config);
        framework.start();
        Bundle bundle = framework.getBundleContext().installBundle("file:" + args[1]);
        bundle.start();
        bundle.stop();
        framework.stop();
        framework.waitForStop(10_000);
        System.out.println("framework " + framework.getState());
    }
}

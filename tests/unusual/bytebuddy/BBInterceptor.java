import java.util.concurrent.Callable;

import net.bytebuddy.implementation.bind.annotation.SuperCall;

/** The rebased BBTask.run delegates here; the original run is called back through @SuperCall. */
public class BBInterceptor {
    public static int calls;

    public static synchronized int around(@SuperCall Callable<Integer> original) throws Exception {
        calls++;
        return original.call();
    }
}

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/** A java.lang.reflect.Proxy whose InvocationHandler is synchronized, called from 4 threads. */
public class UnusualProxy {
    public interface Counter {
        int add(int n);
        int total();
    }

    static final class Handler implements InvocationHandler {
        private int total;

        @Override
        public synchronized Object invoke(Object proxy, Method m, Object[] args) {
            if (m.getName().equals("add")) {
                total += (Integer) args[0];
                notifyAll();
                return total;
            }
            if (m.getName().equals("total")) {
                return total;
            }
            throw new UnsupportedOperationException(m.getName());
        }
    }

    public static void main(String[] args) throws Exception {
        Handler h = new Handler();
        Counter c = (Counter) Proxy.newProxyInstance(
                UnusualProxy.class.getClassLoader(), new Class<?>[] {Counter.class}, h);
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 500; k++) {
                    c.add(1);
                }
            }, "proxy-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        try {
            c.hashCode();
        } catch (UnsupportedOperationException e) {
            System.out.println("hashCode refused: " + e.getMessage());
        }
        System.out.println("proxy class is proxy: " + Proxy.isProxyClass(c.getClass()));
        System.out.println("proxy total " + c.total());
    }
}

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.function.IntSupplier;

/**
 * A class loader that looks in its own folder before asking its parent (child-first), loading
 * a class that the application class loader can load too; the child's copy runs synchronized
 * code from 4 threads.
 */
public class UnusualChildFirst {
    static final class ChildFirst extends ClassLoader {
        private final Path dir;

        ChildFirst(Path dir, ClassLoader parent) {
            super("child-first", parent);
            this.dir = dir;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null && !name.startsWith("java.")) {
                    Path f = dir.resolve(name.replace('.', '/') + ".class");
                    if (Files.exists(f)) {
                        try {
                            byte[] b = Files.readAllBytes(f);
                            c = defineClass(name, b, 0, b.length);
                        } catch (IOException e) {
                            throw new ClassNotFoundException(name, e);
                        }
                    }
                }
                if (c == null) {
                    c = super.loadClass(name, false); // parent last
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        ChildFirst loader = new ChildFirst(dir, UnusualChildFirst.class.getClassLoader());
        Class<?> c = loader.loadClass("ChildWork");
        System.out.println("loaded by child: " + (c.getClassLoader() == loader)
                + ", differs from parent's: " + (c != ChildWork.class));
        IntSupplier w = (IntSupplier) c.getDeclaredConstructor().newInstance();
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 500; k++) {
                    w.getAsInt();
                }
            }, "child-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("child total " + w.getAsInt());
    }
}

import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;

/**
 * Loads every class of two folders (original and rewritten) in fresh,
 * child-first class loaders and forces linking (hence verification when the
 * JVM runs with -Xverify:all / -XX:+BytecodeVerificationLocal) with
 * getDeclaredMethods(), which links the class without initializing it.
 * Prints one line per class whose outcome differs, then a summary.
 *
 * usage: java -Xverify:all -XX:+UnlockDiagnosticVMOptions -XX:+BytecodeVerificationLocal
 *             VerifyHarness ORIG_DIR NEW_DIR [TRACKER_DIR]
 */
public class VerifyHarness {
    /** Packages of the JDK's own modules: a jar's copy of them (saxon's org.w3c.dom) is
     *  never used on a real class path either, and defining it in two loaders makes loader
     *  constraints fail on the second. With -Dorca.jdkPackagesFromJdk=true (for jars, not
     *  for the JDK's own jmods) those classes come from the JDK. */
    static final Set<String> JDK_PACKAGES = Boolean.getBoolean("orca.jdkPackagesFromJdk")
        ? ModuleLayer.boot().modules().stream().flatMap(m -> m.getPackages().stream())
            .collect(Collectors.toSet())
        : Set.of();

    static final class DirLoader extends ClassLoader {
        final Path[] dirs;
        DirLoader(Path... dirs) { super(null); this.dirs = dirs; }
        @Override protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                int dot = name.lastIndexOf('.');
                boolean jdk = dot > 0 && JDK_PACKAGES.contains(name.substring(0, dot));
                if (c == null && !jdk && !name.startsWith("java.")) {
                    for (Path d : dirs) {
                        Path p = d.resolve(name.replace('.', '/') + ".class");
                        if (Files.isRegularFile(p)) {
                            try {
                                byte[] b = Files.readAllBytes(p);
                                c = defineClass(name, b, 0, b.length);
                            } catch (IOException e) { throw new ClassNotFoundException(name, e); }
                            break;
                        }
                    }
                }
                if (c == null) c = ClassLoader.getPlatformClassLoader().loadClass(name);
                return c;
            }
        }
    }

    static String outcome(ClassLoader l, String name) {
        try {
            Class<?> c = Class.forName(name, false, l);
            c.getDeclaredMethods(); // links (verifies) without initializing
            c.getDeclaredConstructors();
            return "OK";
        } catch (Throwable t) {
            return t.getClass().getName();
        }
    }

    public static void main(String[] a) throws Exception {
        Path orig = Paths.get(a[0]), neu = Paths.get(a[1]);
        Path[] extra = a.length > 2 ? new Path[]{Paths.get(a[2])} : new Path[0];
        List<String> names;
        try (Stream<Path> s = Files.walk(neu)) {
            names = s.filter(p -> p.toString().endsWith(".class"))
                     .map(p -> neu.relativize(p).toString().replace(File.separatorChar, '/'))
                     .map(n -> n.substring(0, n.length() - 6).replace('/', '.'))
                     .filter(n -> !n.endsWith("module-info") && !n.endsWith("package-info"))
                     .sorted().collect(Collectors.toList());
        }
        Path[] od = new Path[1 + extra.length]; od[0] = orig; System.arraycopy(extra, 0, od, 1, extra.length);
        Path[] nd = new Path[1 + extra.length]; nd[0] = neu; System.arraycopy(extra, 0, nd, 1, extra.length);
        ClassLoader lo = new DirLoader(od), ln = new DirLoader(nd);
        int same = 0, bothOk = 0, differ = 0, verifyErrors = 0;
        for (String n : names) {
            String o = outcome(lo, n), m = outcome(ln, n);
            if (o.equals(m)) { same++; if (o.equals("OK")) bothOk++; }
            else {
                differ++;
                if (m.contains("VerifyError") || m.contains("ClassFormatError")) verifyErrors++;
                System.out.println("DIFF " + n + " original=" + o + " rewritten=" + m);
            }
        }
        System.out.println("classes=" + names.size() + " same=" + same + " bothOK=" + bothOk + " differ=" + differ + " newVerifyOrFormatErrors=" + verifyErrors);
    }
}

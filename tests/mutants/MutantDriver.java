import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Defines mutated class files, each in a fresh class loader of its own, and links them without
 * initializing them; prints one line per mutant with its outcome. Used by tests/e2e/mutants.rs.
 *
 * <p>usage: {@code MutantDriver LIST BLOB SOURCE...}: LIST has one line per mutant,
 * {@code index group name offset length} (name in binary form, a.b.C), BLOB holds the bytes;
 * SOURCE number {@code group} is the folder or jar of the original classes: the mutant's loader
 * defines the originals of the other classes of its source that linking the mutant needs.
 *
 * <p>Output: {@code M index OK}, {@code M index define:Throwable message} (defineClass
 * threw) or {@code M index link:Throwable message} (linking threw: HotSpot's
 * {@code getDeclaredMethods()} links the class, which verifies it, and does not run its static
 * initializer, which {@code main} checks first on a probe); then {@code S group name count} for
 * every original class the loaders defined, with how many times; then {@code END count}.
 * Nothing of a mutant runs.
 *
 * <p>No synchronized, wait/notify, thread calls or lambdas here: the agent's rewriter leaves
 * these classes unchanged, so that its counts are the mutants' and the originals' only.
 */
public class MutantDriver {
    /** The original classes of a folder or a jar, and how often each was defined. */
    static final class Source {
        final Path dir;
        final ZipFile jar;
        final Map<String, Integer> defined = new TreeMap<>();

        Source(String source) throws IOException {
            Path p = Paths.get(source);
            if (Files.isDirectory(p)) {
                dir = p;
                jar = null;
            } else {
                dir = null;
                jar = new ZipFile(p.toFile());
            }
        }

        /** The class file of a binary name, or null. */
        byte[] bytes(String name) throws IOException {
            String entry = name.replace('.', '/') + ".class";
            if (dir != null) {
                Path f = dir.resolve(entry);
                return Files.isRegularFile(f) ? Files.readAllBytes(f) : null;
            }
            ZipEntry e = jar.getEntry(entry);
            if (e == null) {
                return null;
            }
            try (InputStream in = jar.getInputStream(e)) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                byte[] buf = new byte[8192];
                int n;
                while ((n = in.read(buf)) > 0) {
                    out.write(buf, 0, n);
                }
                return out.toByteArray();
            }
        }
    }

    /**
     * A fresh loader for one mutant: defines the mutant under its name (at most once), and the
     * original of every other class of the mutant's source itself (child first, so that the
     * mutant shares its run-time package with them and no mutant sees another's classes);
     * everything else comes from the platform loader.
     */
    static final class One extends ClassLoader {
        final Source source;
        final String name;
        final byte[] bytes;
        boolean attempted;

        One(Source source, String name, byte[] bytes) {
            super(ClassLoader.getPlatformClassLoader());
            this.source = source;
            this.name = name;
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String n, boolean resolve) throws ClassNotFoundException {
            Class<?> c = findLoadedClass(n);
            if (c != null) {
                return c;
            }
            if (n.equals(name)) {
                // a mutant naming itself as its own super class must not be defined twice:
                // the agent would see it twice
                if (attempted) {
                    throw new ClassNotFoundException(n + " is being defined");
                }
                attempted = true;
                return defineClass(n, bytes, 0, bytes.length);
            }
            byte[] b;
            try {
                b = source.bytes(n);
            } catch (IOException e) {
                throw new ClassNotFoundException(n, e);
            }
            if (b == null) {
                return super.loadClass(n, resolve);
            }
            // counted before defining: the agent's hook sees the class even if defining fails
            source.defined.merge(n, 1, Integer::sum);
            return defineClass(n, b, 0, b.length);
        }
    }

    /** The Throwable's class, then its message on the same line (for the test's messages). */
    static String describe(Throwable t) {
        String m = String.valueOf(t.getMessage()).replace('\n', ' ').replace('\r', ' ');
        return t.getClass().getName() + " " + m;
    }

    /** A class whose static initializer says that it ran: see the start of {@code main}. */
    static final class Probe {
        static {
            System.setProperty("mutantdriver.probe", "initialized");
        }

        static int f() {
            return 1;
        }
    }

    public static void main(String[] args) throws Exception {
        // what the driver does to each mutant must not initialize it (run its <clinit>)
        ClassLoader app = MutantDriver.class.getClassLoader();
        Class<?> probe = Class.forName("MutantDriver$Probe", false, app);
        probe.getDeclaredMethods();
        if (System.getProperty("mutantdriver.probe") != null) {
            throw new AssertionError("getDeclaredMethods() initialized the class");
        }
        List<String> list = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        byte[] blob = Files.readAllBytes(Paths.get(args[1]));
        Source[] sources = new Source[args.length - 2];
        for (int i = 0; i < sources.length; i++) {
            sources[i] = new Source(args[i + 2]);
        }
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        int count = 0;
        for (String line : list) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split(" ");
            int index = Integer.parseInt(f[0]);
            int group = Integer.parseInt(f[1]);
            String name = f[2];
            int offset = Integer.parseInt(f[3]);
            int length = Integer.parseInt(f[4]);
            byte[] b = new byte[length];
            System.arraycopy(blob, offset, b, 0, length);
            One loader = new One(sources[group], name, b);
            String outcome;
            Class<?> c = null;
            try {
                c = loader.loadClass(name);
                outcome = null;
            } catch (Throwable t) {
                outcome = "define:" + describe(t);
            }
            if (c != null) {
                try {
                    c.getDeclaredMethods(); // links (verifies) without initializing
                    outcome = "OK";
                } catch (Throwable t) {
                    outcome = "link:" + describe(t);
                }
            }
            out.println("M " + index + " " + outcome);
            count++;
            if (count % 256 == 0) {
                out.flush();
            }
        }
        for (int g = 0; g < sources.length; g++) {
            for (Map.Entry<String, Integer> e : sources[g].defined.entrySet()) {
                out.println("S " + g + " " + e.getKey() + " " + e.getValue());
            }
        }
        out.println("END " + count);
        out.flush();
    }
}

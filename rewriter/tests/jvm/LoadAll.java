import java.io.*;
import java.nio.file.*;
import java.util.*;

/**
 * Links every class listed under the patch folders (one folder per module):
 * Class.forName(name, false, loader-of-its-module) + getDeclaredMethods(),
 * which verifies the class (with -Xverify:all) without initializing it.
 * usage: java [patch options] LoadAll PATCH_ROOT
 */
public class LoadAll {
    public static void main(String[] a) throws Exception {
        Path root = Paths.get(a[0]);
        int ok = 0, verify = 0, other = 0;
        Map<String, Integer> otherKinds = new TreeMap<>();
        List<Path> mods = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(root)) { ds.forEach(mods::add); }
        Collections.sort(mods);
        for (Path m : mods) {
            String mod = m.getFileName().toString();
            Optional<Module> om = ModuleLayer.boot().findModule(mod);
            if (!om.isPresent()) continue;
            ClassLoader l = om.get().getClassLoader();
            List<String> names = new ArrayList<>();
            try (java.util.stream.Stream<Path> s = Files.walk(m)) {
                s.filter(p -> p.toString().endsWith(".class")).forEach(p -> {
                    String n = m.relativize(p).toString();
                    n = n.substring(0, n.length() - 6).replace('/', '.');
                    if (!n.endsWith("module-info")) names.add(n);
                });
            }
            Collections.sort(names);
            for (String n : names) {
                try {
                    Class<?> c = Class.forName(n, false, l);
                    c.getDeclaredMethods();
                    ok++;
                } catch (VerifyError | ClassFormatError e) {
                    verify++;
                    System.out.println("VERIFY " + n + ": " + e);
                } catch (Throwable e) {
                    other++;
                    otherKinds.merge(e.getClass().getName(), 1, Integer::sum);
                }
            }
        }
        System.out.println("linked=" + ok + " verifyErrors=" + verify + " otherErrors=" + other + " " + otherKinds);
    }
}

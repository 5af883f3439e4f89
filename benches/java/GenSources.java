import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes COUNT Java source files (generics, lambdas, records, switch, nested classes) into
 * DIR/src and their list into DIR/sources.txt, for the javac workload:
 * `java -m jdk.compiler/com.sun.tools.javac.Main -d DIR/out @DIR/sources.txt`.
 * Usage: java GenSources DIR COUNT
 */
public class GenSources {
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        int count = Integer.parseInt(args[1]);
        Path src = dir.resolve("src/gen");
        Files.createDirectories(src);
        List<String> files = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            StringBuilder s = new StringBuilder();
            s.append("package gen;\n\nimport java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n\n");
            s.append("public class C").append(i).append("<T extends Comparable<T>> {\n");
            s.append("    private final List<T> items = new ArrayList<>();\n");
            s.append("    private final Map<String, List<T>> groups = new HashMap<>();\n");
            s.append("    public record Pair<A, B>(A first, B second) {}\n");
            s.append("    public sealed interface Node permits Leaf, Branch {}\n");
            s.append("    public record Leaf(int value) implements Node {}\n");
            s.append("    public record Branch(Node left, Node right) implements Node {}\n");
            for (int m = 0; m < 12; m++) {
                s.append("    public synchronized void add").append(m).append("(T t) { items.add(t); groups.computeIfAbsent(String.valueOf(t).substring(0, Math.min(2, String.valueOf(t).length())), k -> new ArrayList<>()).add(t); }\n");
                s.append("    public <R> List<R> map").append(m).append("(Function<? super T, ? extends R> f) { return items.stream().filter(Objects::nonNull).map(f).collect(Collectors.toList()); }\n");
                s.append("    public Optional<T> max").append(m).append("() { return items.stream().max(Comparator.naturalOrder()); }\n");
                s.append("    public static int sum").append(m).append("(Node n) {\n");
                s.append("        if (n instanceof Leaf l) return l.value() + ").append(m).append(";\n");
                s.append("        if (n instanceof Branch b) return sum").append(m).append("(b.left()) + sum").append(m).append("(b.right());\n");
                s.append("        throw new IllegalStateException();\n    }\n");
                s.append("    public static String kind").append(m).append("(int x) {\n        return switch (x % 4) {\n            case 0 -> \"zero\";\n            case 1 -> \"one\" + x;\n            case 2 -> { String t = Integer.toHexString(x); yield t.toUpperCase(); }\n            default -> String.format(\"%d-%s\", x, kind").append(m).append("(x / 4));\n        };\n    }\n");
                s.append("    public Pair<T, Integer> pair").append(m).append("(int k) { return new Pair<>(items.isEmpty() ? null : items.get(k % items.size()), k * ").append(m + 1).append("); }\n");
            }
            if (i > 0) {
                s.append("    public static C").append(i - 1).append("<String> previous() { C").append(i - 1).append("<String> c = new C").append(i - 1).append("<>(); c.add0(\"x\"); return c; }\n");
            }
            s.append("}\n");
            Path f = src.resolve("C" + i + ".java");
            Files.writeString(f, s);
            files.add(f.toString());
        }
        Files.write(dir.resolve("sources.txt"), files);
        System.out.println(count + " sources in " + src);
    }
}

import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.zip.*;
import org.objectweb.asm.*;

/**
 * The same transformation as orca-rewriter, done with ASM (frames kept, not
 * recomputed; COMPUTE_MAXS), single-threaded over the JDK jmods, for the
 * throughput comparison in rewriter/README.md.
 *
 * javac -cp /usr/share/java/asm.jar -d OUT AsmBench.java
 * java -cp /usr/share/java/asm.jar:OUT AsmBench $JAVA_HOME/jmods [passes]
 */
public class AsmBench {
    static final String T = "orca/OrcaProfilerTracker";
    static final String OBJ1 = "(Ljava/lang/Object;)V";

    static final class MV extends MethodVisitor {
        final boolean sync, isStatic;
        final String owner;
        final int version;
        final Label start = new Label(), end = new Label(), handler = new Label();

        MV(MethodVisitor mv, boolean sync, boolean isStatic, String owner, int version) {
            super(Opcodes.ASM9, mv);
            this.sync = sync; this.isStatic = isStatic; this.owner = owner; this.version = version;
        }

        void loadMonitor() {
            if (!isStatic) super.visitVarInsn(Opcodes.ALOAD, 0);
            else if ((version & 0xffff) >= 49) super.visitLdcInsn(Type.getObjectType(owner));
            else {
                super.visitLdcInsn(owner.replace('/', '.'));
                super.visitMethodInsn(Opcodes.INVOKESTATIC, "java/lang/Class", "forName", "(Ljava/lang/String;)Ljava/lang/Class;", false);
            }
        }

        @Override public void visitCode() {
            super.visitCode();
            if (sync) {
                super.visitLabel(start);
                loadMonitor();
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "monitorEntered", OBJ1, false);
            }
        }

        @Override public void visitInsn(int op) {
            if (op == Opcodes.MONITORENTER) {
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.DUP);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "monitorEnter", OBJ1, false);
                super.visitInsn(op);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "monitorEntered", OBJ1, false);
                return;
            }
            if (op == Opcodes.MONITOREXIT) {
                super.visitInsn(Opcodes.DUP);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "monitorExit", OBJ1, false);
            } else if (sync && op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                loadMonitor();
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "monitorExit", OBJ1, false);
            }
            super.visitInsn(op);
        }

        @Override public void visitMethodInsn(int op, String o, String name, String desc, boolean itf) {
            if (op == Opcodes.INVOKEVIRTUAL || op == Opcodes.INVOKEINTERFACE) {
                String w = null;
                if (name.equals("wait") && (desc.equals("()V") || desc.equals("(J)V") || desc.equals("(JI)V"))) w = "objectWait";
                else if (name.equals("notify") && desc.equals("()V")) w = "objectNotify";
                else if (name.equals("notifyAll") && desc.equals("()V")) w = "objectNotifyAll";
                if (w != null) {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, T, w, "(Ljava/lang/Object;" + desc.substring(1), false);
                    return;
                }
                if (o.equals("java/lang/Thread")) {
                    if (name.equals("start") && desc.equals("()V")) w = "threadStart";
                    else if (name.equals("join") && (desc.equals("()V") || desc.equals("(J)V") || desc.equals("(JI)V"))) w = "threadJoin";
                    if (w != null) {
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, T, w, "(Ljava/lang/Thread;" + desc.substring(1), false);
                        return;
                    }
                } else if (name.equals("start") && desc.equals("()V")) {
                    super.visitInsn(Opcodes.DUP);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "threadStarting", OBJ1, false);
                } else if (name.equals("join") && desc.equals("()V")) {
                    super.visitInsn(Opcodes.DUP);
                    super.visitInsn(Opcodes.DUP);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "threadJoining", OBJ1, false);
                    super.visitMethodInsn(op, o, name, desc, itf);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "threadJoined", OBJ1, false);
                    return;
                }
                if (o.equals("java/util/concurrent/Semaphore") && op == Opcodes.INVOKEVIRTUAL) {
                    switch (name) {
                        case "acquire": w = "semaphoreAcquire"; break;
                        case "acquireUninterruptibly": w = "semaphoreAcquireUninterruptibly"; break;
                        case "tryAcquire": w = "semaphoreTryAcquire"; break;
                        case "release": w = "semaphoreRelease"; break;
                        default: break;
                    }
                    if (w != null) {
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, T, w, "(Ljava/util/concurrent/Semaphore;" + desc.substring(1), false);
                        return;
                    }
                }
            } else if (op == Opcodes.INVOKESTATIC && o.equals("java/lang/Thread") && name.equals("sleep") && (desc.equals("(J)V") || desc.equals("(JI)V"))) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "threadSleep", desc, false);
                return;
            }
            super.visitMethodInsn(op, o, name, desc, itf);
        }

        @Override public void visitMaxs(int maxStack, int maxLocals) {
            if (sync) {
                super.visitLabel(end);
                super.visitLabel(handler);
                if ((version & 0xffff) >= 50) {
                    Object[] locals = isStatic ? new Object[0] : new Object[]{owner};
                    super.visitFrame(Opcodes.F_FULL, locals.length, locals, 1, new Object[]{"java/lang/Throwable"});
                }
                super.visitTryCatchBlock(start, end, handler, null);
                loadMonitor();
                super.visitMethodInsn(Opcodes.INVOKESTATIC, T, "monitorExit", OBJ1, false);
                super.visitInsn(Opcodes.ATHROW);
            }
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    static byte[] transform(byte[] b) {
        ClassReader cr = new ClassReader(b);
        ClassWriter cw = new ClassWriter(cr, ClassWriter.COMPUTE_MAXS);
        cr.accept(new ClassVisitor(Opcodes.ASM9, cw) {
            String name; int version;
            @Override public void visit(int v, int acc, String n, String sig, String sup, String[] itf) {
                name = n; version = v; super.visit(v, acc, n, sig, sup, itf);
            }
            @Override public MethodVisitor visitMethod(int acc, String n, String d, String s, String[] e) {
                MethodVisitor mv = super.visitMethod(acc, n, d, s, e);
                boolean sync = (acc & Opcodes.ACC_SYNCHRONIZED) != 0 && (acc & (Opcodes.ACC_NATIVE | Opcodes.ACC_ABSTRACT)) == 0;
                return new MV(mv, sync, (acc & Opcodes.ACC_STATIC) != 0, name, version);
            }
        }, 0);
        return cw.toByteArray();
    }

    public static void main(String[] a) throws Exception {
        List<byte[]> classes = new ArrayList<>();
        long total = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get(a[0]), "*.jmod")) {
            List<Path> jm = new ArrayList<>(); ds.forEach(jm::add); Collections.sort(jm);
            for (Path p : jm) {
                byte[] all = Files.readAllBytes(p);
                try (ZipInputStream z = new ZipInputStream(new ByteArrayInputStream(all, 4, all.length - 4))) {
                    for (ZipEntry e; (e = z.getNextEntry()) != null; ) {
                        if (e.getName().startsWith("classes/") && e.getName().endsWith(".class")) {
                            byte[] b = z.readAllBytes(); classes.add(b); total += b.length;
                        }
                    }
                }
            }
        }
        int passes = a.length > 1 ? Integer.parseInt(a[1]) : 5;
        long sink = 0;
        for (int w = 0; w < 3; w++) for (byte[] b : classes) sink += transform(b).length; // JIT warm-up
        long best = Long.MAX_VALUE;
        for (int p = 0; p < passes; p++) {
            long t = System.nanoTime();
            for (byte[] b : classes) sink += transform(b).length;
            best = Math.min(best, System.nanoTime() - t);
        }
        double s = best / 1e9;
        System.out.printf("ASM %s (COMPUTE_MAXS, frames kept), single thread, best of %d passes after 3 warm-up passes:%n",
                org.objectweb.asm.ClassReader.class.getPackage().getImplementationVersion(), passes);
        System.out.printf("whole corpus %d classes %.1f MB  %.1f ms  %.0f classes/s  %.1f MB/s  (sink %d)%n",
                classes.size(), total / 1e6, s * 1e3, classes.size() / s, total / 1e6 / s, sink % 10);
    }
}

import java.lang.reflect.Method;

import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Classes generated at run time with ASM and defined by a custom class loader:
 * {@code gen} makes a Java 11 class with a synchronized block around notifyAll and a timed wait;
 * {@code jsr} makes a Java 1.4 (version 48) class whose try/finally is a jsr/ret subroutine
 * around a synchronized block. Both run from 4 threads.
 */
public class UnusualAsm implements Opcodes {
    static final class Loader extends ClassLoader {
        Loader(ClassLoader parent) {
            super("asm-loader", parent);
        }

        Class<?> define(String name, byte[] b) {
            return defineClass(name, b, 0, b.length);
        }
    }

    /** static void go(Object lock) { synchronized (lock) { count++; lock.notifyAll(); lock.wait(1); } } */
    static byte[] gen() {
        ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_FRAMES | ClassWriter.COMPUTE_MAXS);
        cw.visit(V11, ACC_PUBLIC | ACC_SUPER, "GenWork", null, "java/lang/Object", null);
        cw.visitSource("GenWork.gen", null);
        cw.visitField(ACC_PUBLIC | ACC_STATIC, "count", "I", null, null).visitEnd();
        MethodVisitor mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "go", "(Ljava/lang/Object;)V",
                null, new String[] {"java/lang/InterruptedException"});
        mv.visitCode();
        Label start = new Label(), end = new Label(), handler = new Label(), handlerEnd = new Label();
        mv.visitTryCatchBlock(start, end, handler, null);
        mv.visitTryCatchBlock(handler, handlerEnd, handler, null);
        Label l1 = new Label();
        mv.visitLabel(l1);
        mv.visitLineNumber(1, l1);
        mv.visitVarInsn(ALOAD, 0);
        mv.visitInsn(DUP);
        mv.visitVarInsn(ASTORE, 1);
        mv.visitInsn(MONITORENTER);
        mv.visitLabel(start);
        Label l2 = new Label();
        mv.visitLabel(l2);
        mv.visitLineNumber(2, l2);
        mv.visitFieldInsn(GETSTATIC, "GenWork", "count", "I");
        mv.visitInsn(ICONST_1);
        mv.visitInsn(IADD);
        mv.visitFieldInsn(PUTSTATIC, "GenWork", "count", "I");
        mv.visitVarInsn(ALOAD, 0);
        mv.visitMethodInsn(INVOKEVIRTUAL, "java/lang/Object", "notifyAll", "()V", false);
        mv.visitVarInsn(ALOAD, 0);
        mv.visitInsn(LCONST_1);
        mv.visitMethodInsn(INVOKEVIRTUAL, "java/lang/Object", "wait", "(J)V", false);
        mv.visitVarInsn(ALOAD, 1);
        mv.visitInsn(MONITOREXIT);
        mv.visitLabel(end);
        mv.visitInsn(RETURN);
        mv.visitLabel(handler);
        mv.visitVarInsn(ASTORE, 2);
        mv.visitVarInsn(ALOAD, 1);
        mv.visitInsn(MONITOREXIT);
        mv.visitLabel(handlerEnd);
        mv.visitVarInsn(ALOAD, 2);
        mv.visitInsn(ATHROW);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    /**
     * Java 1.4 style, as javac 1.4 compiled try/finally:
     * static int go(Object lock) { try { synchronized (lock) { count++; lock.notifyAll(); } }
     * finally { UnusualAsm.finallyRan(); } return count; } with the finally block a jsr/ret
     * subroutine.
     */
    static byte[] jsr() {
        ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(V1_4, ACC_PUBLIC | ACC_SUPER, "OldWork", null, "java/lang/Object", null);
        cw.visitSource("OldWork.gen", null);
        cw.visitField(ACC_PUBLIC | ACC_STATIC, "count", "I", null, null).visitEnd();
        MethodVisitor mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "go", "(Ljava/lang/Object;)I",
                null, null);
        mv.visitCode();
        Label tryStart = new Label(), afterSync = new Label(), tryHandler = new Label();
        Label mStart = new Label(), mEnd = new Label(), mHandler = new Label(), mHandlerEnd = new Label();
        Label fin = new Label();
        mv.visitTryCatchBlock(mStart, mEnd, mHandler, null);
        mv.visitTryCatchBlock(mHandler, mHandlerEnd, mHandler, null);
        mv.visitTryCatchBlock(tryStart, afterSync, tryHandler, null);
        mv.visitLabel(tryStart);
        mv.visitLineNumber(1, tryStart);
        mv.visitVarInsn(ALOAD, 0);
        mv.visitInsn(DUP);
        mv.visitVarInsn(ASTORE, 1);
        mv.visitInsn(MONITORENTER);
        mv.visitLabel(mStart);
        mv.visitLineNumber(2, mStart);
        mv.visitFieldInsn(GETSTATIC, "OldWork", "count", "I");
        mv.visitInsn(ICONST_1);
        mv.visitInsn(IADD);
        mv.visitFieldInsn(PUTSTATIC, "OldWork", "count", "I");
        mv.visitVarInsn(ALOAD, 0);
        mv.visitMethodInsn(INVOKEVIRTUAL, "java/lang/Object", "notifyAll", "()V", false);
        mv.visitVarInsn(ALOAD, 1);
        mv.visitInsn(MONITOREXIT);
        mv.visitLabel(mEnd);
        mv.visitJumpInsn(GOTO, afterSync);
        mv.visitLabel(mHandler);
        mv.visitVarInsn(ASTORE, 2);
        mv.visitVarInsn(ALOAD, 1);
        mv.visitInsn(MONITOREXIT);
        mv.visitLabel(mHandlerEnd);
        mv.visitVarInsn(ALOAD, 2);
        mv.visitInsn(ATHROW);
        mv.visitLabel(afterSync);
        Label l3 = new Label();
        mv.visitLabel(l3);
        mv.visitLineNumber(3, l3);
        mv.visitJumpInsn(JSR, fin);
        mv.visitFieldInsn(GETSTATIC, "OldWork", "count", "I");
        mv.visitInsn(IRETURN);
        mv.visitLabel(tryHandler);
        mv.visitVarInsn(ASTORE, 3);
        mv.visitJumpInsn(JSR, fin);
        mv.visitVarInsn(ALOAD, 3);
        mv.visitInsn(ATHROW);
        mv.visitLabel(fin);
        mv.visitLineNumber(4, fin);
        mv.visitVarInsn(ASTORE, 4);
        mv.visitMethodInsn(INVOKESTATIC, "UnusualAsm", "finallyRan", "()V", false);
        mv.visitVarInsn(RET, 4);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    static final java.util.concurrent.atomic.AtomicInteger FINALLIES =
            new java.util.concurrent.atomic.AtomicInteger();

    /** Called by OldWork's finally subroutine (outside its synchronized block). */
    public static void finallyRan() {
        FINALLIES.incrementAndGet();
    }

    public static void main(String[] args) throws Exception {
        boolean old = args[0].equals("jsr");
        byte[] b = old ? jsr() : gen();
        String name = old ? "OldWork" : "GenWork";
        Class<?> c = new Loader(UnusualAsm.class.getClassLoader()).define(name, b);
        Method go = c.getMethod("go", Object.class);
        Object lock = new Object();
        int per = old ? 1000 : 200;
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                try {
                    for (int k = 0; k < per; k++) {
                        go.invoke(null, lock);
                    }
                } catch (ReflectiveOperationException e) {
                    throw new RuntimeException(e);
                }
            }, name + "-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println(name + " class file version " + (b[7] & 0xff)
                + ", count " + c.getField("count").get(null));
        try {
            go.invoke(null, (Object) null); // monitorenter on null: NullPointerException
        } catch (java.lang.reflect.InvocationTargetException e) {
            System.out.println("null lock: " + e.getCause().getClass().getName());
        }
        if (old) {
            System.out.println("finally blocks run " + FINALLIES.get());
        }
    }
}

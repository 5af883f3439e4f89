import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Another agent (java.lang.instrument, with ASM): puts `System.nanoTime()` calls at the start
 * of `OtherAgentTarget.work` and before its `notify`, keeping its line numbers: three of each
 * when the class loads (with the argument `load`), and one more each time the program asks
 * for a retransformation (which starts from the class file as loaded), so that every version
 * of the class differs from the one before. Its jar may say it cannot retransform: then its
 * transformer runs only at load, among the retransformation-incapable ones.
 */
public class Shift {
    static Instrumentation inst;
    static volatile int round;

    public static void premain(String args, Instrumentation i) {
        inst = i;
        boolean atLoad = "load".equals(args);
        i.addTransformer(new ClassFileTransformer() {
            @Override
            public byte[] transform(ClassLoader l, String name, Class<?> c, ProtectionDomain pd, byte[] b) {
                if (!"OtherAgentTarget".equals(name) || !(atLoad || round > 0)) {
                    return null;
                }
                int calls = (atLoad ? 3 : 0) + round;
                ClassReader r = new ClassReader(b);
                ClassWriter w = new ClassWriter(r, ClassWriter.COMPUTE_MAXS);
                r.accept(new ClassVisitor(Opcodes.ASM9, w) {
                    @Override
                    public MethodVisitor visitMethod(int acc, String n, String d, String s, String[] e) {
                        MethodVisitor mv = super.visitMethod(acc, n, d, s, e);
                        if (!n.equals("work")) {
                            return mv;
                        }
                        return new MethodVisitor(Opcodes.ASM9, mv) {
                            void insert() {
                                for (int k = 0; k < calls; k++) {
                                    super.visitMethodInsn(Opcodes.INVOKESTATIC, "java/lang/System", "nanoTime", "()J", false);
                                    super.visitInsn(Opcodes.POP2);
                                }
                            }

                            @Override
                            public void visitCode() {
                                super.visitCode();
                                insert();
                            }

                            @Override
                            public void visitMethodInsn(int op, String owner, String n, String d, boolean itf) {
                                if (n.equals("notify")) {
                                    insert();
                                }
                                super.visitMethodInsn(op, owner, n, d, itf);
                            }
                        };
                    }
                }, 0);
                return w.toByteArray();
            }
        }, i.isRetransformClassesSupported());
    }

    public static void retransform(Class<?> c) throws Exception {
        round++;
        inst.retransformClasses(c);
    }
}

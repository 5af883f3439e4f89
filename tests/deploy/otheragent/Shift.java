import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Another agent (java.lang.instrument, with ASM): puts three `System.nanoTime()` calls at the
 * start of `OtherAgentTarget.work`, keeping its line numbers. With the argument `load` it
 * does so when the class loads (after Orca, whose environment is older); otherwise only when
 * the program asks for a retransformation, after `work` has already run.
 */
public class Shift {
    static Instrumentation inst;
    static volatile boolean armed;

    public static void premain(String args, Instrumentation i) {
        inst = i;
        boolean atLoad = "load".equals(args);
        i.addTransformer(new ClassFileTransformer() {
            @Override
            public byte[] transform(ClassLoader l, String name, Class<?> c, ProtectionDomain pd, byte[] b) {
                if (!"OtherAgentTarget".equals(name) || !(atLoad || armed)) {
                    return null;
                }
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
                            @Override
                            public void visitCode() {
                                super.visitCode();
                                for (int k = 0; k < 3; k++) {
                                    super.visitMethodInsn(Opcodes.INVOKESTATIC, "java/lang/System", "nanoTime", "()J", false);
                                    super.visitInsn(Opcodes.POP2);
                                }
                            }
                        };
                    }
                }, 0);
                return w.toByteArray();
            }
        }, true);
    }

    public static void retransform(Class<?> c) throws Exception {
        armed = true;
        inst.retransformClasses(c);
    }
}

import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.util.function.IntSupplier;

import net.bytebuddy.ByteBuddy;
import net.bytebuddy.ClassFileVersion;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.modifier.SynchronizationState;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import net.bytebuddy.implementation.MethodDelegation;
import net.bytebuddy.pool.TypePool;

import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * Classes made at run time by Byte Buddy (Debian's libbyte-buddy-java), each run from THREADS
 * threads ROUNDS times:
 * <ul>
 * <li>{@code BBCounter}, a new class (subclass of Object implementing IntSupplier) loaded by
 * Byte Buddy's own ByteArrayClassLoader, whose {@code getAsInt} is a generated
 * {@code synchronized} method delegating (MethodDelegation) to {@link BBDelegate#next}, which
 * calls {@code notifyAll} on it;</li>
 * <li>{@code BBPlain}, a javac-compiled class that Byte Buddy redefines before it is ever
 * loaded, inlining {@link BBAdvice}'s {@code synchronized (lock) { ...; lock.notifyAll(); }}
 * at the start of {@code work}, and defines in the application class loader with
 * {@code Lookup.defineClass};</li>
 * <li>{@code BBTask}, a javac-compiled class that Byte Buddy rebases before it is ever loaded:
 * its {@code run} (with a synchronized block) is renamed {@code run$original$...} and the new
 * {@code run} delegates to the synchronized {@link BBInterceptor#around}, which calls the
 * original back through an auxiliary Callable class Byte Buddy generates; both are defined
 * child-first in a new Byte Buddy class loader.</li>
 * </ul>
 */
public class UnusualByteBuddy {
    static final int THREADS = 4;
    static final int ROUNDS = 500;

    public static void main(String[] args) throws Exception {
        // Byte Buddy 1.12 reads class files up to Java 20 only, and refuses the JDK's own
        // (java/lang/Object.class is version 69 on JDK 25) unless told to try: the classes it
        // writes here are Java 11 ones on every JDK.
        System.setProperty("net.bytebuddy.experimental", "true");
        ByteBuddy bb = new ByteBuddy(ClassFileVersion.JAVA_V11);

        Class<? extends IntSupplier> counterClass = bb.subclass(Object.class)
                .name("BBCounter")
                .implement(IntSupplier.class)
                .defineMethod("getAsInt", int.class, Visibility.PUBLIC, SynchronizationState.SYNCHRONIZED)
                .intercept(MethodDelegation.to(BBDelegate.class))
                .make()
                .load(UnusualByteBuddy.class.getClassLoader(), ClassLoadingStrategy.Default.WRAPPER)
                .getLoaded()
                .asSubclass(IntSupplier.class);
        IntSupplier counter = counterClass.getDeclaredConstructor().newInstance();

        TypeDescription plain = TypePool.Default.ofSystemLoader().describe("BBPlain").resolve();
        Class<?> plainClass = bb.redefine(plain, ClassFileLocator.ForClassLoader.ofSystemLoader())
                .visit(Advice.to(BBAdvice.class).on(named("work")))
                .make()
                .load(ClassLoader.getSystemClassLoader(),
                        ClassLoadingStrategy.UsingLookup.of(MethodHandles.lookup()))
                .getLoaded();
        Method work = plainClass.getMethod("work", Object.class, int.class);

        TypeDescription task = TypePool.Default.ofSystemLoader().describe("BBTask").resolve();
        DynamicType.Unloaded<?> rebased = bb.rebase(task, ClassFileLocator.ForClassLoader.ofSystemLoader())
                .method(named("run"))
                .intercept(MethodDelegation.to(BBInterceptor.class))
                .make();
        Class<?> taskClass = rebased.load(ClassLoader.getSystemClassLoader(),
                ClassLoadingStrategy.Default.CHILD_FIRST).getLoaded();
        Object taskObject = taskClass.getDeclaredConstructor().newInstance();
        Method run = taskClass.getMethod("run", int.class);
        Object lock = new Object();

        Thread[] ts = new Thread[THREADS];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                try {
                    for (int k = 0; k < ROUNDS; k++) {
                        counter.getAsInt();
                        work.invoke(null, lock, k);
                        run.invoke(taskObject, k);
                    }
                } catch (ReflectiveOperationException e) {
                    throw new RuntimeException(e);
                }
            }, "bytebuddy-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("BBCounter loader is Byte Buddy's: "
                + counterClass.getClassLoader().getClass().getName().startsWith("net.bytebuddy."));
        System.out.println("BBCounter.getAsInt synchronized: " + java.lang.reflect.Modifier.isSynchronized(
                counterClass.getMethod("getAsInt").getModifiers()));
        System.out.println("BBPlain loader is the application's: "
                + (plainClass.getClassLoader() == ClassLoader.getSystemClassLoader()));
        System.out.println("counter calls " + BBDelegate.calls);
        System.out.println("advice entries " + BBAdvice.entries + ", work sum " + BBPlain.sum);
        System.out.println("BBTask loader is Byte Buddy's: "
                + taskClass.getClassLoader().getClass().getName().startsWith("net.bytebuddy."));
        System.out.println("BBTask auxiliary types: " + rebased.getAuxiliaryTypes().size());
        System.out.println("interceptor calls " + BBInterceptor.calls + ", task total "
                + taskClass.getField("total").get(null));
    }
}

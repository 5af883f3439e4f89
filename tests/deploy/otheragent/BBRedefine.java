import java.lang.instrument.Instrumentation;

import net.bytebuddy.ByteBuddy;
import net.bytebuddy.ClassFileVersion;
import net.bytebuddy.agent.ByteBuddyAgent;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.loading.ClassReloadingStrategy;

import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * Byte Buddy's agent (Debian's libbyte-buddy-java) redefines {@link BBTarget}, which Orca has
 * instrumented and whose {@code work} has run: ROUNDS times, alternately with
 * {@link BBCount}'s advice inlined at the start of {@code work} and without (the class file
 * as Byte Buddy reads it from the class path), running {@code work} after each; by
 * retransformation (Byte Buddy's transformer hands back the class it made, whatever it is
 * given) or by redefinition (second argument). With the third argument {@code attach} the
 * agent attaches itself at run time (after Orca's hooks); otherwise it was given as
 * {@code -javaagent}.
 */
public class BBRedefine {
    public static void main(String[] args) throws Exception {
        System.setProperty("net.bytebuddy.experimental", "true");
        int rounds = Integer.parseInt(args[0]);
        ClassReloadingStrategy.Strategy strategy = args[1].equals("redefine")
                ? ClassReloadingStrategy.Strategy.REDEFINITION
                : ClassReloadingStrategy.Strategy.RETRANSFORMATION;
        Instrumentation inst = args[2].equals("attach")
                ? ByteBuddyAgent.install()
                : ByteBuddyAgent.getInstrumentation();
        BBTarget.work();
        for (int i = 0; i < rounds; i++) {
            var type = new ByteBuddy(ClassFileVersion.JAVA_V11)
                    .redefine(BBTarget.class, ClassFileLocator.ForClassLoader.ofSystemLoader());
            if (i % 2 == 0) {
                type = type.visit(Advice.to(BBCount.class).on(named("work")));
            }
            type.make().load(BBTarget.class.getClassLoader(), new ClassReloadingStrategy(inst, strategy));
            BBTarget.work();
        }
        System.out.println("work " + BBTarget.count + ", advice " + BBCount.entries);
    }
}

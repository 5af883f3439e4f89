/*
 * Compile-time stand-in for the JDK's own jdk.internal.vm.annotation.DontInline, so that the
 * tracker (compiled with --release 8, which cannot see java.base's internal packages) can
 * carry the annotation. Only the tracker's classes are embedded in the agent: at run time
 * HotSpot reads the annotation's name from their RuntimeVisibleAnnotations (it honours it
 * for classes of the boot loader, which the tracker's are), and this class is never loaded.
 *
 * Why the tracker needs it: C2 inlines the tracker's monitor methods into every synchronized
 * block of the program, and with them everything they call that is hot enough (up to 325
 * bytecodes); the rare paths (nested acquisitions, growing the held stack) kept there
 * doubled C2's compile time and code size on the Jetty bench (-XX:+CITime).
 */
package jdk.internal.vm.annotation;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

@Target({ElementType.METHOD, ElementType.CONSTRUCTOR})
@Retention(RetentionPolicy.RUNTIME)
public @interface DontInline {
}

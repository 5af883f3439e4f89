/*
 * Compile-time stand-in for the JDK's own jdk.internal.vm.annotation.Hidden, so that the
 * tracker (compiled with --release 8, which cannot see java.base's internal packages) can
 * carry the annotation. Only the tracker's class file is embedded in the agent: at run time
 * the name in its RuntimeVisibleAnnotations is what HotSpot reads (for classes of the boot
 * loader, which the tracker is), and this class is never loaded.
 */
package jdk.internal.vm.annotation;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

@Target({ElementType.METHOD, ElementType.CONSTRUCTOR})
@Retention(RetentionPolicy.RUNTIME)
public @interface Hidden {
}

/*
 * Compile-time stand-in for the JDK's own jdk.internal.misc.Unsafe (java.base, JDK 9+), so
 * that the tracker (compiled with --release 8, which cannot see java.base's internal
 * packages) can publish its buffer position with a release store, read the agent's coarse clock
 * (and mark it used) and read a thread's ID and ThreadLocal map (its Rec's slot). Only the tracker's class
 * file is embedded in the agent: at run time the tracker, in java.base, links to the JDK's
 * class, and this one is never loaded. It declares only what the tracker calls.
 */
package jdk.internal.misc;

public final class Unsafe {
    public static Unsafe getUnsafe() {
        throw new UnsupportedOperationException();
    }

    public long objectFieldOffset(Class<?> c, String name) {
        throw new UnsupportedOperationException();
    }

    public void putIntRelease(Object o, long offset, int x) {
        throw new UnsupportedOperationException();
    }

    public Object getReference(Object o, long offset) {
        throw new UnsupportedOperationException();
    }

    public long getLong(Object o, long offset) {
        throw new UnsupportedOperationException();
    }

    public long getLongOpaque(Object o, long offset) {
        throw new UnsupportedOperationException();
    }

    public void putLongOpaque(Object o, long offset, long x) {
        throw new UnsupportedOperationException();
    }

    public long getAndAddLong(Object o, long offset, long delta) {
        throw new UnsupportedOperationException();
    }
}

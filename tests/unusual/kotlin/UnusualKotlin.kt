// Kotlin-compiled concurrency (issue 7): the inline `synchronized(lock) { }` (monitorenter and
// monitorexit in the caller, with kotlinc's own exception table), `@Synchronized` functions
// (ACC_SYNCHRONIZED), a wait/notify hand-off between two threads on a `java.lang.Object`, and
// `lazy {}` (kotlin.SynchronizedLazyImpl from kotlin-stdlib, Kotlin-compiled too).
//
// Deterministic by construction, for the test's exact counts:
//   KWork.block: BLOCK_THREADS threads x BLOCK_ROUNDS iterations, one synchronized each, of which
//     every 10th throws inside the block (caught outside) and every 10th (+5) returns from it;
//   KCounter.add (@Synchronized): ADD_THREADS x ADD_ROUNDS calls; KCounter.fail: one call, which
//     throws (its stack trace is printed);
//   KRegistry.put (@Synchronized, in an object): REGISTRY_PUTS calls;
//   kotlin.SynchronizedLazyImpl.getValue: LAZIES lazies, each read twice by one thread (only the
//     first read takes the lock);
//   KHandOff.pass: 2 x HANDOFF_ROUNDS notify calls; the wait calls are counted by the program and
//     printed on stderr ("kotlin waits N"), since how often a thread finds it is not its turn yet
//     depends on scheduling.
@file:Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN")

const val BLOCK_THREADS = 4
const val BLOCK_ROUNDS = 500
const val ADD_THREADS = 3
const val ADD_ROUNDS = 400
const val REGISTRY_PUTS = 50
const val LAZIES = 30
const val HANDOFF_ROUNDS = 200

object KWork {
    private val lock = Any()
    var count = 0

    /** One synchronized block per call; leaves it normally, by an exception or by a return. */
    fun block(i: Int): Int {
        synchronized(lock) { // @kt-block
            count++
            if (i % 10 == 0) throw IllegalStateException("at $i")
            if (i % 10 == 5) return -1
        }
        return i
    }
}

class KCounter {
    var n = 0
        private set

    @Synchronized
    fun add(k: Int) {
        n += k
    }

    /** Leaves a synchronized method by an exception (called once). */
    @Synchronized
    fun fail(): Int {
        if (n >= 0) throw UnsupportedOperationException("fail at $n") // @kt-fail
        return n
    }
}

object KRegistry {
    private val names = ArrayList<String>()

    @Synchronized
    fun put(name: String) {
        names.add(name)
    }

    @Synchronized
    fun size(): Int = names.size
}

class KHandOff {
    private val lock = java.lang.Object()
    private var turn = 0
    var waits = 0

    /** Thread `me` (0 or 1) waits for its turn, passes it on and notifies the other. */
    fun pass(me: Int) {
        synchronized(lock) { // @kt-handoff
            while (turn != me) {
                waits++
                lock.wait() // @kt-wait
            }
            turn = 1 - me
            lock.notify() // @kt-notify
        }
    }
}

class KLazy(private val k: Int) {
    val value: Int by lazy { k * k }
}

fun main() {
    val blockers = (0 until BLOCK_THREADS).map { t ->
        Thread({
            for (i in 0 until BLOCK_ROUNDS) {
                try {
                    KWork.block(i)
                } catch (e: IllegalStateException) {
                }
            }
        }, "kotlin-block-$t")
    }
    val counter = KCounter()
    val adders = (0 until ADD_THREADS).map { t ->
        Thread({ repeat(ADD_ROUNDS) { counter.add(1) } }, "kotlin-add-$t")
    }
    val handOff = KHandOff()
    val passers = (0..1).map { me ->
        Thread({ repeat(HANDOFF_ROUNDS) { handOff.pass(me) } }, "kotlin-pass-$me")
    }
    val all = blockers + adders + passers
    all.forEach { it.start() }
    repeat(REGISTRY_PUTS) { KRegistry.put("name-$it") }
    val lazies = (1..LAZIES).map { KLazy(it) }
    var sum = 0
    for (l in lazies) sum += l.value
    for (l in lazies) sum += l.value
    all.forEach { it.join() }
    try {
        counter.fail()
    } catch (e: UnsupportedOperationException) {
        // The same stack trace, line numbers included, with and without the agent.
        println("kotlin $e at ${e.stackTrace.joinToString(" < ")}")
    }
    println("kotlin block count ${KWork.count}")
    println("kotlin counter ${counter.n}")
    println("kotlin registry ${KRegistry.size()}")
    println("kotlin lazy sum $sum")
    println("kotlin hand-off done")
    System.err.println("kotlin waits ${handOff.waits}")
}

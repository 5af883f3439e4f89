// Scala-compiled concurrency (issue 7): `lock.synchronized { }` (scalac 2.11's own monitor and
// handler layout, as an expression with a value), a method whose whole body is
// `this.synchronized { }`, a wait/notifyAll hand-off between two threads, and `lazy val`
// (scalac's double-checked `x$lzycompute` on `this`).
//
// Deterministic by construction, for the test's exact counts:
//   SWork.block: BlockThreads x BlockRounds calls, one lock.synchronized each, of which every
//     10th throws inside the block (caught outside) and every 10th (+5) returns from it;
//   SCounter.add (this.synchronized): AddThreads x AddRounds calls; SCounter.fail: one call,
//     which throws (its stack trace is printed);
//   SLazy.value$lzycompute: Lazies objects, each value read twice by one thread (only the first
//     read takes the lock);
//   SHandOff.pass: 2 x HandOffRounds notifyAll calls; the wait calls are counted by the program
//     and printed on stderr ("scala waits N"), since how often a thread finds it is not its
//     turn yet depends on scheduling.
object SWork {
  private val lock = new Object
  var count = 0

  /** One synchronized block per call; leaves it normally, by an exception or by a return. */
  def block(i: Int): Int = {
    val r = lock.synchronized { // @sc-block
      count += 1
      if (i % 10 == 0) throw new IllegalStateException("at " + i)
      if (i % 10 == 5) return -1
      i
    }
    r
  }
}

class SCounter {
  private var n = 0
  def add(k: Int): Unit = this.synchronized { n += k }

  /** Leaves a synchronized method by an exception (called once). */
  def fail(): Int = this.synchronized {
    if (n >= 0) throw new UnsupportedOperationException("fail at " + n) // @sc-fail
    n
  }
  def total: Int = n
}

class SHandOff {
  private val lock = new Object
  private var turn = 0
  var waits = 0

  /** Thread `me` (0 or 1) waits for its turn, passes it on and wakes the other. */
  def pass(me: Int): Unit = lock.synchronized { // @sc-handoff
    while (turn != me) {
      waits += 1
      lock.wait() // @sc-wait
    }
    turn = 1 - me
    lock.notifyAll() // @sc-notify
  }
}

class SLazy(k: Int) {
  lazy val value: Int = k * k
}

object UnusualScala {
  val BlockThreads = 4
  val BlockRounds = 500
  val AddThreads = 3
  val AddRounds = 400
  val Lazies = 30
  val HandOffRounds = 200

  def thread(name: String)(body: => Unit): Thread =
    new Thread(new Runnable { def run(): Unit = body }, name)

  def main(args: Array[String]): Unit = {
    val blockers = (0 until BlockThreads).map { t =>
      thread("scala-block-" + t) {
        for (i <- 0 until BlockRounds) {
          try SWork.block(i)
          catch { case _: IllegalStateException => () }
        }
      }
    }
    val counter = new SCounter
    val adders = (0 until AddThreads).map { t =>
      thread("scala-add-" + t) { for (_ <- 0 until AddRounds) counter.add(1) }
    }
    val handOff = new SHandOff
    val passers = (0 to 1).map { me =>
      thread("scala-pass-" + me) { for (_ <- 0 until HandOffRounds) handOff.pass(me) }
    }
    val all = blockers ++ adders ++ passers
    all.foreach(_.start())
    val lazies = (1 to Lazies).map(new SLazy(_))
    var sum = 0
    for (l <- lazies) sum += l.value
    for (l <- lazies) sum += l.value
    all.foreach(_.join())
    try counter.fail()
    catch {
      // The same stack trace, line numbers included, with and without the agent.
      case e: UnsupportedOperationException =>
        println("scala " + e + " at " + e.getStackTrace.mkString(" < "))
    }
    println("scala block count " + SWork.count)
    println("scala counter " + counter.total)
    println("scala lazy sum " + sum)
    println("scala hand-off done")
    System.err.println("scala waits " + handOff.waits)
  }
}

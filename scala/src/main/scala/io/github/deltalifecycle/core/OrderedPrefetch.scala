package io.github.deltalifecycle.core

import java.util.concurrent.{CompletableFuture, ExecutorService, Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable

/**
 * Maps `f` over an iterator on a shared I/O pool, at most `window` items ahead, and yields results
 * in input order. Reading many small log files is latency-bound, so overlapping the reads matters
 * more than the CPU count; the window keeps memory flat on long histories.
 */
object OrderedPrefetch {
  private val threadCount = new AtomicInteger()
  private lazy val pool: ExecutorService = Executors.newFixedThreadPool(
    8,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, s"delta-lifecycle-log-io-${threadCount.incrementAndGet()}")
        t.setDaemon(true)
        t
      }
    }
  )

  def map[A, B](items: Iterator[A], window: Int = 64)(f: A => B): Iterator[B] = new Iterator[B] {
    private val inFlight = mutable.Queue.empty[CompletableFuture[B]]
    private def fill(): Unit =
      while (inFlight.size < window && items.hasNext) {
        val item = items.next()
        inFlight.enqueue(CompletableFuture.supplyAsync(() => f(item), pool))
      }
    fill()

    override def hasNext: Boolean = inFlight.nonEmpty
    override def next(): B = {
      val head = inFlight.dequeue()
      fill()
      try head.join()
      catch {
        case e: java.util.concurrent.CompletionException if e.getCause != null =>
          inFlight.foreach(_.cancel(true))
          throw e.getCause
      }
    }
  }
}

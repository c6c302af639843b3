package nimbus.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * The start of a measured phase, shared by the bench's programs (each module adds this folder to its sources).
 */
final class JitSettle {
  private JitSettle() {}

  /**
   * Waits until the JVM's JIT compilers have been idle for 500 ms (at most 20 s), then prints {@code START <phase>
   * <ms waited>}, so that any compiling left over from the phase before is not charged to the next one. Idle means
   * no compilation finished meanwhile ({@code getTotalCompilationTime} grows as each one ends), so one long
   * compilation still running can pass for idle. {@code -Dnimbus.bench.settle=false} starts at once.
   */
  static void settle(String phase) throws InterruptedException {
    long begin = System.nanoTime();
    if (Boolean.parseBoolean(System.getProperty("nimbus.bench.settle", "true"))) {
      CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      long last = jit.getTotalCompilationTime();
      long quietSince = begin;
      while (System.nanoTime() - quietSince < 500_000_000L && System.nanoTime() - begin < 20_000_000_000L) {
        Thread.sleep(50);
        long now = jit.getTotalCompilationTime();
        if (now != last) {
          last = now;
          quietSince = System.nanoTime();
        }
      }
    }
    System.out.printf("START %s %d%n", phase, (System.nanoTime() - begin) / 1_000_000);
    System.out.flush();
  }
}

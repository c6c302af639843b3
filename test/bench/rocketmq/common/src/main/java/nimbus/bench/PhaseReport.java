package nimbus.bench;

import java.util.Arrays;
import java.util.Locale;

/**
 * A phase's result line, shared by the bench's programs: {@code RESULT <phase> <messages> <seconds> <p50 ms> <p99 ms>
 * <errors> <first ms>}, the last the time from the phase's start to its first message (-1: not measured).
 */
final class PhaseReport {
  private PhaseReport() {}

  static void print(String phase, int n, long nanos, long[] latencies, int errors) {
    print(phase, n, nanos, latencies, errors, -1);
  }

  static void print(String phase, int n, long nanos, long[] latencies, int errors, long firstNanos) {
    long[] sorted = latencies.clone();
    Arrays.sort(sorted);
    double p50 = sorted.length == 0 ? 0 : sorted[(int) Math.floor((sorted.length - 1) * 0.50)] / 1e6;
    double p99 = sorted.length == 0 ? 0 : sorted[(int) Math.floor((sorted.length - 1) * 0.99)] / 1e6;
    double first = firstNanos < 0 ? -1 : firstNanos / 1e6;
    // Locale.ROOT: a decimal point whatever the machine's locale (the suite parses the numbers).
    System.out.printf(Locale.ROOT, "RESULT %s %d %.3f %.2f %.2f %d %.1f%n", phase, n, nanos / 1e9, p50, p99, errors, first);
    System.out.flush();
  }
}

package nimbus.bench;

import java.util.Arrays;

/** A phase's result line, shared by the bench's programs: {@code RESULT <phase> <messages> <seconds> <p50 ms> <p99 ms> <errors>}. */
final class PhaseReport {
  private PhaseReport() {}

  static void print(String phase, int n, long nanos, long[] latencies, int errors) {
    long[] sorted = latencies.clone();
    Arrays.sort(sorted);
    double p50 = sorted.length == 0 ? 0 : sorted[(int) Math.floor((sorted.length - 1) * 0.50)] / 1e6;
    double p99 = sorted.length == 0 ? 0 : sorted[(int) Math.floor((sorted.length - 1) * 0.99)] / 1e6;
    System.out.printf("RESULT %s %d %.3f %.2f %.2f %d%n", phase, n, nanos / 1e9, p50, p99, errors);
    System.out.flush();
  }
}

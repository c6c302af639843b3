package nimbus.bench;

/**
 * The unmeasured messages before each phase, shared by the bench's programs: {@code -Dnimbus.bench.warmup=N}
 * (default 0), so that the client's JIT compiles a phase's shape before the phase is timed, not during it.
 */
final class Warmup {
  private Warmup() {}

  /** Messages of each send phase's own shape sent first, unmeasured. */
  static final int MESSAGES = Integer.getInteger("nimbus.bench.warmup", 0);

  /**
   * The messages a consume phase reads first, unmeasured, of the {@code sent} there are: never so many that less
   * than a phase's {@code messages} is left to time (none with the consume phase alone).
   */
  static int beforeConsume(int sent, int messages) {
    return Math.max(0, Math.min(MESSAGES, sent - messages));
  }
}

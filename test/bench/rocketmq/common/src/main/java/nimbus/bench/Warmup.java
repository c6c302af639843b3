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

  /**
   * The messages a push consumer reads first, unmeasured, in a group of its own (so the timed group still reads every
   * message from the first): all {@code sent} when warm-ups are on. With only 5,000 the client's JIT compiler was
   * still compiling the pull and consume path's hot methods (MessageDecoder.decode, ConsumeRequest.run,
   * processConsumeResult) inside the timed phase, at whichever broker its tiering reached them: 30–51 µs of its CPU
   * per message against one broker, 16–20 against the other, the same methods compiled to different tiers.
   */
  static int beforePushConsume(int sent) {
    return MESSAGES > 0 ? sent : 0;
  }
}

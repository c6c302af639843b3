package nimbus.remoting;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;

/**
 * Sync sends with generous time limits (30 s a send and a name-server call, where the client's defaults are 3 s),
 * for connections whose first use is slow by nature, such as a TLS handshake in a cold JVM on a busy machine
 * (test/remoting/proxy-tls.test.ts). Prints {@code sent <msgId> <brokerName>} per message; messages as
 * {@link Interop#message}.
 *
 * <pre>  PatientSend &lt;namesrv&gt; &lt;topic&gt; &lt;count&gt; &lt;tag&gt;</pre>
 */
public final class PatientSend {
  private PatientSend() {}

  public static void main(String[] args) throws Exception {
    // Interop's send timeout (30 s) and the same for name-server calls.
    DefaultMQProducer producer = Clients.producer(args[0], "nimbus-remoting-patient-producer", "patient");
    producer.setMqClientApiTimeout(30_000);
    producer.start();
    try {
      for (int i = 0; i < Integer.parseInt(args[2]); i++) {
        SendResult r = producer.send(Interop.message(args[1], args[3], i));
        System.out.println("sent " + r.getMsgId() + " " + r.getMessageQueue().getBrokerName());
      }
    } finally {
      producer.shutdown();
    }
    System.exit(0);
  }
}

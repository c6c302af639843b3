import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * DynamoDB Local (in memory, telemetry off) on 127.0.0.1 only, on a free port. DynamoDB Local has no option to
 * choose its address: its Jetty server listens on every interface. Before starting it, this launcher sets the
 * host of that server's connector to loopback and its port to 0 (the OS picks a free one), then prints
 * "port=N" on stdout. It stops when stdin ends, so it never outlives the process that started it, however
 * that one ends.
 *
 * Run as a single source file: java -cp DynamoDBLocal.jar DynamoDBLocalLoopback.java
 */
public final class DynamoDBLocalLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy =
        ServerRunner.createServerFromCommandLineArgs(new String[] {"-inMemory", "-disableTelemetry", "-port", "8000"});
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    ServerConnector loopback = null;
    for (Connector connector : server.getConnectors()) {
      if (!(connector instanceof ServerConnector)) throw new IllegalStateException("unexpected connector " + connector);
      loopback = (ServerConnector) connector;
      loopback.setHost("127.0.0.1");
      loopback.setPort(0);
    }
    if (loopback == null || server.getConnectors().length != 1) throw new IllegalStateException("expected one connector");
    proxy.start();
    System.out.println("port=" + loopback.getLocalPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // Nothing is ever sent: stdin only tells when the parent is gone.
    }
    proxy.stop();
    System.exit(0);
  }
}

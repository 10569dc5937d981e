import io.shale.client.CasResult;
import io.shale.client.Expectation;
import io.shale.client.Lease;
import io.shale.client.ShaleClient;
import io.shale.client.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A user's program on Java 17, compiled and run by that runtime's source launcher (SdkOnJava17IT):
 * the SDK's common calls over mutual TLS against a cluster whose nodes run on Java 25.
 * Arguments: endpoints (comma-separated), CA file, client certificate, client key.
 */
public class Java17Client {
  public static void main(String[] args) {
    try (ShaleClient c =
        ShaleClient.builder()
            .endpoints(args[0].split(","))
            .tls(TlsSettings.mutual(Path.of(args[1]), Path.of(args[2]), Path.of(args[3])))
            .deadline(Duration.ofSeconds(30))
            .build()) {
      c.put("j17/a", "1");
      c.put("j17/b", "2");
      System.out.println("get j17/a = " + c.get("j17/a").valueUtf8());
      System.out.println("scan j17/ = " + c.scanPrefix("j17/").stream().count() + " keys");
      CasResult cas = c.compareAndSet("j17/a", Expectation.value("1"), "3");
      System.out.println("cas applied = " + cas.applied());
      Lease lease = c.leases().grant(Duration.ofSeconds(30));
      c.put("j17/leased", "x", lease.id());
      System.out.println("lease keys = " + c.leases().timeToLive(lease.id(), true).keys().size());
      c.delete("j17/b");
      System.out.println("deleted j17/b = " + (c.get("j17/b") == null));
      System.out.println("runtime = " + Runtime.version().feature());
    }
  }
}

package io.shale.ops.cli;

import io.shale.client.Lease;
import io.shale.client.LeaseKeeper;
import io.shale.client.LeaseTimeToLive;
import io.shale.client.ShaleClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code shalectl lease ...}: grant, revoke, inspect and keep alive leases. */
@Command(
    name = "lease",
    mixinStandardHelpOptions = true,
    description =
        "Leases: keys put with one (put --lease ID) are deleted when it is revoked or expires.",
    subcommands = {
      LeaseCommands.Grant.class,
      LeaseCommands.Revoke.class,
      LeaseCommands.Ttl.class,
      LeaseCommands.ListLeases.class,
      LeaseCommands.KeepAlive.class
    })
final class LeaseCommands {
  private LeaseCommands() {}

  @Command(
      name = "grant",
      mixinStandardHelpOptions = true,
      description = "Grants a lease of TTL (e.g. 10s, 1m) and prints its id.")
  static final class Grant extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TTL")
    String ttl;

    @Override
    int run(ShaleClient client, Output out) {
      Lease lease = client.leases().grant(Shalectl.duration(ttl));
      if (out.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", lease.id());
        m.put("ttl_ms", lease.ttl().toMillis());
        out.json(m);
      } else {
        out.line("lease " + lease.id() + " granted with TTL " + lease.ttl().toMillis() + " ms");
      }
      return Shalectl.OK;
    }
  }

  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      description = "Revokes lease ID and deletes its keys (exit 3 if it does not live).")
  static final class Revoke extends ClientCommand {
    @Parameters(index = "0", paramLabel = "ID")
    long id;

    @Override
    int run(ShaleClient client, Output out) {
      long deleted = client.leases().revoke(id);
      if (out.json()) {
        out.json(Map.of("revoked", id, "deleted", deleted));
      } else {
        out.line("lease " + id + " revoked, " + deleted + " keys deleted");
      }
      return Shalectl.OK;
    }
  }

  @Command(
      name = "ttl",
      mixinStandardHelpOptions = true,
      description = "Lease ID's granted TTL and the time it has left (exit 3 if it does not live).")
  static final class Ttl extends ClientCommand {
    @Parameters(index = "0", paramLabel = "ID")
    long id;

    @Option(names = "--keys", description = "Also list its keys (at most 10,000).")
    boolean keys;

    @Override
    int run(ShaleClient client, Output out) {
      LeaseTimeToLive t = client.leases().timeToLive(id, keys);
      List<String> names = new ArrayList<>();
      for (byte[] k : t.keys()) {
        names.add(new String(k, StandardCharsets.UTF_8));
      }
      if (out.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("granted_ttl_ms", t.granted().toMillis());
        m.put("remaining_ms", t.remaining().toMillis());
        if (keys) {
          m.put("keys", names);
          m.put("more_keys", t.moreKeys());
        }
        out.json(m);
      } else {
        out.line(
            "lease "
                + id
                + ": granted TTL "
                + t.granted().toMillis()
                + " ms, "
                + t.remaining().toMillis()
                + " ms left");
        names.forEach(n -> out.line("  " + n));
        if (t.moreKeys()) {
          out.line("  ... (more keys)");
        }
      }
      return Shalectl.OK;
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Every live lease.")
  static final class ListLeases extends ClientCommand {
    @Override
    int run(ShaleClient client, Output out) {
      List<Lease> all = client.leases().list();
      if (out.json()) {
        out.json(
            all.stream()
                .map(l -> Map.of("id", l.id(), "granted_ttl_ms", l.ttl().toMillis()))
                .toList());
      } else {
        out.table(
            List.of("ID", "GRANTED TTL"),
            all.stream().map(l -> Shalectl.row(l.id(), l.ttl().toMillis() + " ms")).toList());
      }
      return Shalectl.OK;
    }
  }

  @Command(
      name = "keep-alive",
      mixinStandardHelpOptions = true,
      description =
          "Keeps lease ID alive (a keep-alive every third of its TTL) for --for, or until"
              + " interrupted; exit 1 if the lease is lost meanwhile, 3 if it does not live.")
  static final class KeepAlive extends ClientCommand {
    @Parameters(index = "0", paramLabel = "ID")
    long id;

    @Option(
        names = "--for",
        paramLabel = "DURATION",
        description = "Stop after this long (default: until interrupted).")
    String duration;

    @Override
    int run(ShaleClient client, Output out) throws InterruptedException {
      LeaseTimeToLive t = client.leases().timeToLive(id, false);
      try (LeaseKeeper keeper = client.leases().keepAlive(new Lease(id, t.granted()))) {
        Duration d = duration == null ? null : Shalectl.duration(duration);
        try {
          String why =
              d == null
                  ? keeper.lost().get()
                  : keeper.lost().get(d.toMillis(), TimeUnit.MILLISECONDS);
          err().println("shalectl: " + why);
          return Shalectl.FAILED;
        } catch (TimeoutException done) {
          out.line("lease " + id + " kept alive for " + d.toMillis() + " ms");
          return Shalectl.OK;
        } catch (ExecutionException e) {
          throw new IllegalStateException(e.getCause());
        }
      }
    }
  }
}

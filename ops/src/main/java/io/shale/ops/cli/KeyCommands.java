package io.shale.ops.cli;

import io.shale.client.CasResult;
import io.shale.client.Entry;
import io.shale.client.Expectation;
import io.shale.client.ShaleClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * shalectl's key commands: put, get, del, scan, cas, txn, watch. Keys and values are UTF-8 text on
 * the command line; {@code put --file} reads a value's bytes from a file ({@code -}: stdin).
 */
final class KeyCommands {
  private KeyCommands() {}

  static Map<String, Object> json(Entry e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("key", e.keyUtf8());
    m.put("value", e.valueUtf8());
    if (e.modIndex() > 0) {
      m.put("mod_index", e.modIndex());
    }
    if (e.version() > 0) {
      m.put("create_index", e.createIndex());
      m.put("version", e.version());
    }
    return m;
  }

  @Command(
      name = "put",
      mixinStandardHelpOptions = true,
      description = "Sets KEY to VALUE (or to the bytes of --file).")
  static final class Put extends ClientCommand {
    @Parameters(index = "0", paramLabel = "KEY")
    String key;

    @Parameters(index = "1", arity = "0..1", paramLabel = "VALUE")
    String value;

    @Option(
        names = "--file",
        paramLabel = "FILE",
        description = "Read the value from FILE " + "('-': standard input).")
    String file;

    @Option(
        names = "--lease",
        paramLabel = "ID",
        description = "Attach KEY to lease ID: it is deleted when the lease is revoked or expires.")
    long lease;

    @Override
    int run(ShaleClient client, Output out) throws IOException {
      if ((value == null) == (file == null)) {
        throw new IllegalArgumentException("put needs a VALUE or --file, not both");
      }
      byte[] bytes = file == null ? value.getBytes(StandardCharsets.UTF_8) : read(file);
      client.put(key.getBytes(StandardCharsets.UTF_8), bytes, lease);
      if (out.json()) {
        out.json(Map.of("put", key, "bytes", bytes.length));
      } else {
        out.line("OK");
      }
      return Shalectl.OK;
    }

    private static byte[] read(String file) throws IOException {
      if (file.equals("-")) {
        try (InputStream in = System.in) {
          return in.readAllBytes();
        }
      }
      return Files.readAllBytes(Path.of(file));
    }
  }

  @Command(
      name = "get",
      mixinStandardHelpOptions = true,
      description =
          "Prints KEY's value (table) or key, value and modification index (json); "
              + "exit code 3 if absent.")
  static final class Get extends ClientCommand {
    @Parameters(index = "0", paramLabel = "KEY")
    String key;

    @Option(
        names = "--stale",
        description =
            "Read the answering node's state, without the "
                + "leader (works without a majority; may be behind).")
    boolean stale;

    @Override
    int run(ShaleClient client, Output out) {
      Entry e =
          client.get(
              key.getBytes(StandardCharsets.UTF_8),
              stale
                  ? io.shale.client.ReadConsistency.STALE
                  : io.shale.client.ReadConsistency.LINEARIZABLE);
      if (e == null) {
        err().println("shalectl: key '" + key + "' not found");
        err().flush();
        return Shalectl.NOT_FOUND;
      }
      if (out.json()) {
        out.json(json(e));
      } else {
        out.line(e.valueUtf8());
      }
      return Shalectl.OK;
    }
  }

  /** A key range given as --prefix, or --from [--to]. */
  static final class Range {
    @Option(
        names = "--prefix",
        paramLabel = "PREFIX",
        description = "Every key beginning " + "with PREFIX.")
    String prefix;

    @Option(
        names = "--from",
        paramLabel = "START",
        description = "Keys from START " + "(inclusive).")
    String from;

    @Option(
        names = "--to",
        paramLabel = "END",
        description = "Keys before END (exclusive; " + "default: to the last key).")
    String to;

    void check() {
      if ((prefix == null) == (from == null)) {
        throw new IllegalArgumentException("give either --prefix or --from [--to]");
      }
      if (prefix != null && to != null) {
        throw new IllegalArgumentException("--to goes with --from, not with --prefix");
      }
    }
  }

  @Command(
      name = "del",
      mixinStandardHelpOptions = true,
      description =
          "Deletes KEY, or every key of a range (in atomic chunks of at most"
              + " limits.delete_range_chunk_keys keys).")
  static final class Del extends ClientCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "KEY")
    String key;

    @ArgGroup(exclusive = false)
    Range range;

    @Override
    int run(ShaleClient client, Output out) {
      if ((key == null) == (range == null)) {
        throw new IllegalArgumentException("del needs a KEY or a range (--prefix, --from/--to)");
      }
      String what;
      if (key != null) {
        client.delete(key);
        what = key;
      } else {
        range.check();
        if (range.prefix != null) {
          client.deletePrefix(range.prefix);
          what = range.prefix + "*";
        } else {
          client.deleteRange(range.from, range.to);
          what = "[" + range.from + ", " + (range.to == null ? "end" : range.to) + ")";
        }
      }
      if (out.json()) {
        out.json(Map.of("deleted", what));
      } else {
        out.line("OK");
      }
      return Shalectl.OK;
    }
  }

  @Command(
      name = "scan",
      mixinStandardHelpOptions = true,
      description =
          "Lists the keys of a range in order: KEY<TAB>VALUE per line (table), or "
              + "a JSON array.")
  static final class Scan extends ClientCommand {
    @ArgGroup(exclusive = false, multiplicity = "1")
    Range range;

    @Option(names = "--limit", paramLabel = "N", description = "At most N keys.")
    long limit;

    @Option(names = "--keys-only", description = "Print keys, not values.")
    boolean keysOnly;

    @Option(names = "--reverse", description = "From the last key down.")
    boolean reverse;

    @Override
    int run(ShaleClient client, Output out) {
      range.check();
      io.shale.client.Scan scan =
          range.prefix != null
              ? client.scanPrefix(range.prefix)
              : client.scan(range.from, range.to);
      if (limit > 0) {
        scan.limit(limit);
      }
      if (keysOnly) {
        scan.keysOnly();
      }
      if (reverse) {
        scan.reverse();
      }
      List<Object> all = new ArrayList<>();
      for (Entry e : scan) {
        if (out.json()) {
          all.add(keysOnly ? Map.of("key", e.keyUtf8()) : json(e));
        } else {
          out.line(keysOnly ? e.keyUtf8() : e.keyUtf8() + "\t" + e.valueUtf8());
        }
      }
      if (out.json()) {
        out.json(all);
      }
      return Shalectl.OK;
    }
  }

  /** What cas compares with: one of a value, absence, a modification index. */
  static final class Expected {
    @Option(
        names = "--expect",
        paramLabel = "VALUE",
        description = "Only if KEY's value is " + "VALUE.")
    String value;

    @Option(names = "--expect-absent", description = "Only if KEY does not exist.")
    boolean absent;

    @Option(
        names = "--expect-mod-index",
        paramLabel = "INDEX",
        description = "Only if KEY " + "was last modified at INDEX (see get -o json).")
    Long modIndex;

    Expectation expectation() {
      return value != null
          ? Expectation.value(value)
          : absent ? Expectation.absent() : Expectation.modIndex(modIndex);
    }
  }

  @Command(
      name = "cas",
      mixinStandardHelpOptions = true,
      description =
          "Compare-and-set: sets KEY to NEW_VALUE (or deletes it, --delete) only if "
              + "it meets the expectation; exit code 4 and the current value if it does not.")
  static final class Cas extends ClientCommand {
    @Parameters(index = "0", paramLabel = "KEY")
    String key;

    @Parameters(index = "1", arity = "0..1", paramLabel = "NEW_VALUE")
    String newValue;

    @Option(names = "--delete", description = "Delete KEY instead of setting it.")
    boolean delete;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Expected expected;

    @Override
    int run(ShaleClient client, Output out) {
      if ((newValue == null) != delete) {
        throw new IllegalArgumentException("cas needs a NEW_VALUE or --delete, not both");
      }
      CasResult r = client.compareAndSet(key, expected.expectation(), newValue);
      if (out.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("applied", r.applied());
        m.put("current", r.current() == null ? null : json(r.current()));
        out.json(m);
      } else if (r.applied()) {
        out.line("OK");
      } else {
        out.line(
            "NOT APPLIED: "
                + (r.current() == null
                    ? key + " is absent"
                    : key
                        + " = "
                        + r.current().valueUtf8()
                        + " (mod index "
                        + r.current().modIndex()
                        + ")"));
      }
      return r.applied() ? Shalectl.OK : Shalectl.CAS_FAILED;
    }
  }

  @Command(
      name = "txn",
      mixinStandardHelpOptions = true,
      description =
          "A transaction from a text spec (--file, '-' or none: standard input), one clause a"
              + " line: 'if version(KEY) == 0', 'if value(KEY) != \"text\"' (targets value,"
              + " version, create, mod; ops == != < >), 'then put KEY VALUE', 'then del KEY',"
              + " 'then delrange START [END]', 'then get KEY', 'else ...'. Prints SUCCEEDED or"
              + " FAILED and each get's result; exit code 4 if the compares did not hold.")
  static final class TxnCommand extends ClientCommand {
    @Option(
        names = "--file",
        paramLabel = "FILE",
        description = "Read the spec from FILE ('-': standard input, the default).")
    String file = "-";

    @Override
    int run(ShaleClient client, Output out) throws IOException {
      String spec =
          file.equals("-")
              ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
              : Files.readString(Path.of(file));
      io.shale.client.TxnResult r = TxnSpec.parse(spec, client.txn()).commit();
      if (out.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("succeeded", r.succeeded());
        m.put("index", r.index());
        List<Object> results = new ArrayList<>();
        for (io.shale.client.TxnResult.OpResult o : r.results()) {
          Map<String, Object> one = new LinkedHashMap<>();
          one.put("deleted", o.deleted());
          one.put("entry", o.entry() == null ? null : json(o.entry()));
          results.add(one);
        }
        m.put("results", results);
        out.json(m);
      } else {
        out.line(r.succeeded() ? "SUCCEEDED" : "FAILED");
        for (io.shale.client.TxnResult.OpResult o : r.results()) {
          if (o.entry() != null) {
            out.line(o.entry().keyUtf8() + "\t" + o.entry().valueUtf8());
          } else if (o.deleted() > 0) {
            out.line("deleted " + o.deleted());
          }
        }
      }
      return r.succeeded() ? Shalectl.OK : Shalectl.CAS_FAILED;
    }
  }

  @Command(
      name = "watch",
      mixinStandardHelpOptions = true,
      description =
          "Prints every change to KEY or a range as it is applied, one line each: 'PUT key value"
              + " (mod index N)' or 'DELETE key (mod index N)' (json: one object a line), until"
              + " interrupted or --count changes; follows node failures without losing or"
              + " repeating one. Exit code 1 if the watch ends on an error (e.g. COMPACTED).")
  static final class WatchCommand extends ClientCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "KEY")
    String key;

    @ArgGroup(exclusive = false)
    Range range;

    @Option(
        names = "--start-index",
        paramLabel = "N",
        description = "The first index whose changes to print (default: from now on).")
    long startIndex;

    @Option(
        names = "--count",
        paramLabel = "N",
        description = "Exit after N changes (default: run until interrupted).")
    long count;

    @Override
    int run(ShaleClient client, Output out) throws InterruptedException {
      if ((key == null) == (range == null)) {
        throw new IllegalArgumentException("watch needs a KEY or a range (--prefix, --from/--to)");
      }
      io.shale.client.WatchOptions options;
      if (key != null) {
        options = io.shale.client.WatchOptions.key(key);
      } else {
        range.check();
        options =
            range.prefix != null
                ? io.shale.client.WatchOptions.prefix(range.prefix)
                : io.shale.client.WatchOptions.range(
                    range.from.getBytes(StandardCharsets.UTF_8),
                    range.to == null ? null : range.to.getBytes(StandardCharsets.UTF_8));
      }
      options.startIndex(startIndex);
      java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
      java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicReference<Exception> failure =
          new java.util.concurrent.atomic.AtomicReference<>();
      try (io.shale.client.Watch w =
          client.watch(
              options,
              new io.shale.client.WatchListener() {
                @Override
                public void onEvents(List<io.shale.client.WatchEvent> events, long through) {
                  for (io.shale.client.WatchEvent e : events) {
                    if (count > 0 && seen.get() >= count) {
                      break;
                    }
                    print(out, e);
                    if (seen.incrementAndGet() == count) {
                      done.countDown();
                    }
                  }
                }

                @Override
                public void onError(io.shale.client.ShaleException e) {
                  failure.set(e);
                  done.countDown();
                }
              })) {
        done.await();
      }
      if (failure.get() != null) {
        err().println("shalectl: watch ended: " + failure.get().getMessage());
        err().flush();
        return Shalectl.FAILED;
      }
      return Shalectl.OK;
    }

    private static void print(Output out, io.shale.client.WatchEvent e) {
      boolean put = e.type() == io.shale.client.WatchEvent.Type.PUT;
      if (out.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", e.type().name());
        m.putAll(json(e.entry()));
        if (!put) {
          m.remove("value");
          m.put("mod_index", e.entry().modIndex());
        }
        out.json(m);
      } else {
        out.line(
            (put
                    ? "PUT " + e.entry().keyUtf8() + " " + e.entry().valueUtf8()
                    : "DELETE " + e.entry().keyUtf8())
                + " (mod index "
                + e.entry().modIndex()
                + ")");
      }
    }
  }
}

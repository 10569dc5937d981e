package io.shale.ops.ycsb;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleException;
import io.shale.ops.cli.ClientTls;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * The YCSB binding: each record is one key, {@code <table>/<key>}, whose value holds its fields
 * ({@link YcsbRecord}). Reads are linearizable; an update of some fields reads the record and
 * writes it back merged (YCSB's core workloads update one field of ten); a scan reads the table's
 * keys from the start key on. One client, shared by YCSB's threads, per process.
 *
 * <p>Properties: {@code shale.endpoints} (default the local cluster's, 127.0.0.1:7201-7203), {@code
 * shale.tls_dir} (a directory with ca.pem and client.root.pem/-key.pem; default .shale-local/certs
 * when it exists, else plaintext), {@code shale.deadline} (seconds, default 10).
 */
public final class ShaleYcsbClient extends DB {
  private static ShaleClient shared;
  private static int users;

  private ShaleClient client;

  @Override
  public void init() throws DBException {
    synchronized (ShaleYcsbClient.class) {
      if (shared == null) {
        try {
          shared = open(getProperties());
        } catch (RuntimeException e) {
          throw new DBException("cannot connect to Shale: " + e.getMessage(), e);
        }
      }
      users++;
      client = shared;
    }
  }

  static ShaleClient open(Properties p) {
    String endpoints =
        p.getProperty("shale.endpoints", "127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203");
    ShaleClient.Builder b =
        ShaleClient.builder()
            .endpoints(endpoints)
            .deadline(Duration.ofSeconds(Long.parseLong(p.getProperty("shale.deadline", "10"))));
    String tls = p.getProperty("shale.tls_dir");
    Path dir = tls != null ? Path.of(tls) : ClientTls.LOCAL_CLUSTER_CERTS;
    if (tls != null || java.nio.file.Files.exists(dir.resolve("ca.pem"))) {
      b.tls(ClientTls.fromDirectory(dir, "root"));
    }
    return b.build();
  }

  @Override
  public void cleanup() {
    synchronized (ShaleYcsbClient.class) {
      if (--users == 0 && shared != null) {
        shared.close();
        shared = null;
      }
    }
  }

  private static String key(String table, String key) {
    return table + "/" + key;
  }

  @Override
  public Status read(
      String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      Entry e = client.get(key(table, key));
      if (e == null) {
        return Status.NOT_FOUND;
      }
      copy(YcsbRecord.decode(e.value()), fields, result);
      return Status.OK;
    } catch (ShaleException | IllegalArgumentException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(
      String table,
      String startkey,
      int recordcount,
      Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    try {
      // The table's keys: from <table>/<startkey> to before <table>0 ('0' follows '/').
      for (Entry e :
          client.scan(key(table, startkey), table + "0").limit(recordcount).pageSize(recordcount)) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        copy(YcsbRecord.decode(e.value()), fields, row);
        result.add(row);
      }
      return Status.OK;
    } catch (ShaleException | IllegalArgumentException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      Entry e = client.get(key(table, key));
      return write(
          table,
          key,
          e == null ? new LinkedHashMap<>() : new LinkedHashMap<>(YcsbRecord.decode(e.value())),
          values);
    } catch (ShaleException | IllegalArgumentException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    return write(table, key, new LinkedHashMap<>(), values);
  }

  /** Puts {@code record} with {@code values} laid over it. */
  private Status write(
      String table, String key, Map<String, byte[]> record, Map<String, ByteIterator> values) {
    try {
      values.forEach((f, v) -> record.put(f, v.toArray()));
      client.put(key(table, key).getBytes(StandardCharsets.UTF_8), YcsbRecord.encode(record));
      return Status.OK;
    } catch (ShaleException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      client.delete(key(table, key));
      return Status.OK;
    } catch (ShaleException e) {
      return Status.ERROR;
    }
  }

  private static void copy(
      Map<String, byte[]> record, Set<String> fields, Map<String, ByteIterator> out) {
    record.forEach(
        (f, v) -> {
          if (fields == null || fields.contains(f)) {
            out.put(f, new ByteArrayByteIterator(v));
          }
        });
  }
}

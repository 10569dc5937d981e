package io.shale.node.audit;

import io.shale.engine.io.JsonLinesFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code DATA_DIR/audit/audit.jsonl}: one line per audited call, rotated past {@code
 * audit.max_file_size} with {@code audit.max_files} old files kept. Fields: {@code node}, {@code
 * user} (empty when the caller named none), {@code authenticated_by} (certificate, token or none),
 * {@code remote} (the caller's address), {@code method}, {@code request} (a summary: no values, no
 * passwords), {@code outcome} (the gRPC status code), {@code detail} (its description). A failure
 * to write is logged and does not fail the call. Thread-safe.
 */
public final class AuditLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);
  public static final String FILE = "audit.jsonl";

  /** One audited call. */
  public record Entry(
      String user,
      String authenticatedBy,
      String remote,
      String method,
      String request,
      String outcome,
      String detail) {}

  private final String node;
  private final JsonLinesFile out;

  public AuditLog(String node, Path dir, long maxFileBytes, int maxFiles) throws IOException {
    Files.createDirectories(dir);
    this.node = node;
    this.out = new JsonLinesFile(dir.resolve(FILE), maxFileBytes, maxFiles);
  }

  public Path file() {
    return out.file();
  }

  public void record(long timeMillis, Entry e) {
    String body =
        "\"node\":"
            + JsonLinesFile.quote(node)
            + ",\"user\":"
            + JsonLinesFile.quote(e.user())
            + ",\"authenticated_by\":"
            + JsonLinesFile.quote(e.authenticatedBy())
            + ",\"remote\":"
            + JsonLinesFile.quote(e.remote())
            + ",\"method\":"
            + JsonLinesFile.quote(e.method())
            + ",\"request\":"
            + JsonLinesFile.quote(e.request())
            + ",\"outcome\":"
            + JsonLinesFile.quote(e.outcome())
            + ",\"detail\":"
            + JsonLinesFile.quote(e.detail());
    try {
      out.append(timeMillis, body);
    } catch (IOException ex) {
      LOG.warn("could not write the audit log {}: {}", out.file(), ex.toString());
    }
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}

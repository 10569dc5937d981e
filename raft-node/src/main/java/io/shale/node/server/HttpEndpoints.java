package io.shale.node.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.shale.engine.concurrent.DaemonThreads;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The node's HTTP endpoints: {@code /metrics} (Prometheus text format), {@code /health} (200 while
 * the process serves), {@code /ready} (200 once the node has caught up with the leader's commit
 * index; 503 with the reason otherwise).
 */
final class HttpEndpoints implements AutoCloseable {
  /** Why the node is not ready, or null when it is. */
  interface Readiness extends Supplier<String> {}

  private final HttpServer server;

  HttpEndpoints(
      String address, PrometheusMeterRegistry registry, Runnable beforeScrape, Readiness readiness)
      throws IOException {
    server =
        HttpServer.create(
            new InetSocketAddress(NodeConfig.host(address), NodeConfig.port(address)), 16);
    server.setExecutor(Executors.newFixedThreadPool(2, DaemonThreads.named("http-endpoints")));
    server.createContext(
        "/metrics",
        ex -> {
          beforeScrape.run();
          respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
        });
    server.createContext("/health", ex -> respond(ex, 200, "text/plain", "ok\n"));
    server.createContext(
        "/ready",
        ex -> {
          String why = readiness.get();
          respond(ex, why == null ? 200 : 503, "text/plain", why == null ? "ready\n" : why + "\n");
        });
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  private static void respond(HttpExchange ex, int code, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

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
 *
 * <p>What a client may bring is bounded, as on the other ports (set once per JVM, before the JDK's
 * HTTP server first starts; a property already set by the operator wins): at most {@link
 * #MAX_CONNECTIONS} connections open, requests of at most {@link #MAX_HEADERS} headers and {@link
 * #MAX_HEADER_BYTES} bytes of them, received within {@link #MAX_REQUEST_SECONDS} (a client that
 * trickles a request is disconnected). Bodies are never read; the server drains at most 64 KiB of
 * one before it closes the connection. Prometheus and probes use a connection or two each.
 */
final class HttpEndpoints implements AutoCloseable {
  static final int MAX_CONNECTIONS = 32;
  static final int MAX_HEADERS = 32;
  static final int MAX_HEADER_BYTES = 16 << 10;
  static final int MAX_REQUEST_SECONDS = 10;
  static final int MAX_RESPONSE_SECONDS = 30;

  static {
    bound("jdk.httpserver.maxConnections", MAX_CONNECTIONS);
    bound("sun.net.httpserver.maxReqHeaders", MAX_HEADERS);
    bound("sun.net.httpserver.maxReqHeaderSize", MAX_HEADER_BYTES);
    bound("sun.net.httpserver.maxReqTime", MAX_REQUEST_SECONDS);
    bound("sun.net.httpserver.maxRspTime", MAX_RESPONSE_SECONDS);
  }

  private static void bound(String property, int value) {
    if (System.getProperty(property) == null) {
      System.setProperty(property, Integer.toString(value));
    }
  }

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

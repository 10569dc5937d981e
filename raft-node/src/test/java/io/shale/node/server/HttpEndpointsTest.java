package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP port's bounds: what one request and how many connections it takes. */
class HttpEndpointsTest {
  private HttpEndpoints http;

  @BeforeEach
  void start() throws IOException {
    http =
        new HttpEndpoints(
            "127.0.0.1:0",
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            () -> {},
            () -> null);
  }

  @AfterEach
  void stop() {
    http.close();
  }

  /** The status line of GET {@code path} on a new connection, or null when the server closed it. */
  private String get(String path, String extraHeaders) throws IOException {
    try (Socket s = new Socket("127.0.0.1", http.port())) {
      s.setSoTimeout(10_000);
      return request(s, path, extraHeaders);
    }
  }

  private static String request(Socket s, String path, String extraHeaders) throws IOException {
    OutputStream out = s.getOutputStream();
    try {
      out.write(
          ("GET " + path + " HTTP/1.1\r\nHost: x\r\n" + extraHeaders + "\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return new BufferedReader(
              new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
          .readLine();
    } catch (java.net.SocketException closed) {
      return null;
    }
  }

  @Test
  void servesHealthAndReadiness() throws IOException {
    assertThat(get("/health", "")).isEqualTo("HTTP/1.1 200 OK");
    assertThat(get("/ready", "")).isEqualTo("HTTP/1.1 200 OK");
  }

  @Test
  void aRequestWithTooManyHeaderBytesIsRefusedAndTheServerGoesOn() throws IOException {
    String big = "X-Big: " + "a".repeat(HttpEndpoints.MAX_HEADER_BYTES) + "\r\n";
    String status = get("/health", big);
    assertThat(status == null || !status.contains(" 200 ")).as(String.valueOf(status)).isTrue();
    StringBuilder many = new StringBuilder();
    for (int i = 0; i <= HttpEndpoints.MAX_HEADERS; i++) {
      many.append("X-H").append(i).append(": v\r\n");
    }
    status = get("/health", many.toString());
    assertThat(status == null || !status.contains(" 200 ")).as(String.valueOf(status)).isTrue();
    assertThat(get("/health", "")).isEqualTo("HTTP/1.1 200 OK");
  }

  @Test
  void connectionsBeyondTheBoundAreClosedUntilOthersEnd() throws Exception {
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < HttpEndpoints.MAX_CONNECTIONS; i++) {
        Socket s = new Socket("127.0.0.1", http.port());
        s.setSoTimeout(10_000);
        // A completed request proves the server has taken the connection; it stays open
        // (keep-alive).
        assertThat(request(s, "/health", "")).isEqualTo("HTTP/1.1 200 OK");
        held.add(s);
      }
      assertThat(get("/health", "")).isNull();
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
    // The server sees the closes and takes new connections again.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    String status = null;
    while (status == null && System.nanoTime() < deadline) {
      status = get("/health", "");
      if (status == null) {
        Thread.sleep(20); // polling a condition, with a deadline
      }
    }
    assertThat(status).isEqualTo("HTTP/1.1 200 OK");
  }
}

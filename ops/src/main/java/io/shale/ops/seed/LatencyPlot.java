package io.shale.ops.seed;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * The seed's "Grafana screenshot": read P99 per second over the mixed phase, one panel per
 * configuration, with the intervals in which a compaction ran shaded and the seconds inside a burst
 * writer's windows marked by a band under the plot. The y axis is logarithmic and shared by all
 * panels, so that a floor at 1 ms and spikes to 100 ms both stay readable and panels compare at a
 * glance.
 */
final class LatencyPlot {
  private static final int WIDTH = 1200;
  private static final int PANEL = 260;
  private static final int LEFT = 80;
  private static final int RIGHT = 20;
  private static final int TOP = 30;
  private static final int BOTTOM = 40;
  private static final Color SHADE = new Color(255, 120, 120, 70);
  private static final Color P99 = new Color(200, 30, 30);
  private static final Color P50 = new Color(40, 140, 60);
  private static final Color BURST = new Color(60, 110, 220);
  private static final int BURST_BAND = 6;

  private LatencyPlot() {}

  private record Second(int second, double p50Us, double p99Us, boolean inBurst) {}

  private record Panel(String label, List<Second> seconds, List<long[]> compactions) {}

  static void write(Path png, Path runs, List<SeedConfig> configs) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<Panel> panels = new ArrayList<>();
    for (SeedConfig c : configs) {
      Path dir = runs.resolve(c.slug());
      List<Second> seconds = new ArrayList<>();
      List<String> rows = Files.readAllLines(dir.resolve("seconds.csv"));
      for (String line : rows.subList(1, rows.size())) {
        String[] f = line.split(",");
        // Runs written before the in_burst column have 9 fields: no burst marks.
        boolean inBurst = f.length > 9 && f[9].equals("1");
        seconds.add(
            new Second(
                Integer.parseInt(f[0]),
                Double.parseDouble(f[3]),
                Double.parseDouble(f[4]),
                inBurst));
      }
      List<long[]> intervals = new ArrayList<>();
      for (String line : Files.readAllLines(dir.resolve("compactions.csv"))) {
        if (!line.startsWith("start")) {
          String[] f = line.split(",");
          intervals.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])});
        }
      }
      panels.add(new Panel(c.label(), seconds, intervals));
    }
    double maxMs = 1;
    int maxSecond = 1;
    for (Panel p : panels) {
      for (Second s : p.seconds()) {
        maxMs = Math.max(maxMs, s.p99Us() / 1000);
        maxSecond = Math.max(maxSecond, s.second());
      }
    }
    double minMs = 1;
    for (Panel p : panels) {
      for (Second s : p.seconds()) {
        if (s.p50Us() > 0) {
          minMs = Math.min(minMs, s.p50Us() / 1000);
        }
      }
    }
    // The power of ten below the lowest median, so the P50 line never lies under the axis.
    double lo = Math.pow(10, Math.floor(Math.log10(minMs)));
    double hi = Math.pow(10, Math.ceil(Math.log10(maxMs * 1.2)));
    int height = panels.size() * (PANEL + TOP + BOTTOM);
    BufferedImage img = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, WIDTH, height);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    for (int i = 0; i < panels.size(); i++) {
      draw(g, panels.get(i), i * (PANEL + TOP + BOTTOM), maxSecond, lo, hi);
    }
    g.dispose();
    ImageIO.write(img, "png", png.toFile());
  }

  private static void draw(Graphics2D g, Panel p, int y0, int maxSecond, double lo, double hi) {
    int top = y0 + TOP;
    int bottom = top + PANEL;
    int plotWidth = WIDTH - LEFT - RIGHT;
    double pxPerMs = plotWidth / (maxSecond * 1000.0);
    // Compaction intervals.
    g.setColor(SHADE);
    for (long[] c : p.compactions()) {
      int x1 = LEFT + (int) (c[0] * pxPerMs);
      int x2 = LEFT + (int) Math.max(c[0] * pxPerMs + 1, c[1] * pxPerMs);
      g.fillRect(x1, top, Math.max(1, x2 - x1), PANEL);
    }
    // Burst windows: a band just under the plot, one block per second inside a window.
    g.setColor(BURST);
    boolean anyBurst = false;
    for (Second s : p.seconds()) {
      if (s.inBurst()) {
        anyBurst = true;
        int x1 = LEFT + (int) ((s.second() - 1) * 1000 * pxPerMs);
        int x2 = LEFT + (int) (s.second() * 1000 * pxPerMs);
        g.fillRect(x1, bottom + 1, Math.max(1, x2 - x1), BURST_BAND);
      }
    }
    // Axes and grid: a line per decade.
    g.setColor(Color.GRAY);
    g.drawRect(LEFT, top, plotWidth, PANEL);
    for (double v = lo; v <= hi * 1.0001; v *= 10) {
      int y = yOf(v, lo, hi, top);
      g.setColor(new Color(225, 225, 225));
      g.drawLine(LEFT + 1, y, LEFT + plotWidth - 1, y);
      g.setColor(Color.DARK_GRAY);
      String label =
          (v >= 1
                  ? String.format(Locale.ROOT, "%.0f", v)
                  : String.format(Locale.ROOT, "%." + (int) Math.round(-Math.log10(v)) + "f", v))
              + " ms";
      g.drawString(label, LEFT - 8 - g.getFontMetrics().stringWidth(label), y + 4);
    }
    int step = maxSecond <= 30 ? 5 : maxSecond <= 200 ? 15 : 60;
    for (int s = 0; s <= maxSecond; s += step) {
      int x = LEFT + (int) (s * 1000 * pxPerMs);
      g.drawLine(x, bottom, x, bottom + 4);
      String label = s + " s";
      g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, bottom + 20);
    }
    // Lines.
    line(g, p.seconds(), true, pxPerMs, lo, hi, top, P50);
    line(g, p.seconds(), false, pxPerMs, lo, hi, top, P99);
    g.setColor(Color.BLACK);
    g.setFont(g.getFont().deriveFont(Font.BOLD, 14f));
    g.drawString(p.label() + ": point-read latency per second", LEFT, y0 + 20);
    g.setFont(g.getFont().deriveFont(Font.PLAIN, 12f));
    int lx = WIDTH - RIGHT - 380;
    g.setColor(P99);
    g.fillRect(lx, y0 + 10, 14, 4);
    g.setColor(Color.BLACK);
    g.drawString("P99", lx + 18, y0 + 16);
    g.setColor(P50);
    g.fillRect(lx + 60, y0 + 10, 14, 4);
    g.setColor(Color.BLACK);
    g.drawString("P50", lx + 78, y0 + 16);
    g.setColor(SHADE);
    g.fillRect(lx + 120, y0 + 6, 14, 12);
    g.setColor(Color.BLACK);
    g.drawString("compaction in progress", lx + 138, y0 + 16);
    if (anyBurst) {
      g.setColor(BURST);
      g.fillRect(lx - 120, y0 + 10, 14, BURST_BAND);
      g.setColor(Color.BLACK);
      g.drawString("burst window", lx - 102, y0 + 16);
    }
  }

  private static void line(
      Graphics2D g,
      List<Second> seconds,
      boolean p50,
      double pxPerMs,
      double lo,
      double hi,
      int top,
      Color color) {
    Path2D.Double path = new Path2D.Double();
    boolean started = false;
    for (Second s : seconds) {
      double ms = (p50 ? s.p50Us() : s.p99Us()) / 1000;
      if (ms <= 0) {
        continue;
      }
      double x = LEFT + (s.second() - 0.5) * 1000 * pxPerMs;
      double y = yOf(Math.max(lo, ms), lo, hi, top);
      if (started) {
        path.lineTo(x, y);
      } else {
        path.moveTo(x, y);
        started = true;
      }
    }
    g.setColor(color);
    g.setStroke(new BasicStroke(p50 ? 1.2f : 1.8f));
    g.draw(path);
    g.setStroke(new BasicStroke(1f));
  }

  private static int yOf(double ms, double lo, double hi, int top) {
    double f = (Math.log10(ms) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
    return top + PANEL - (int) Math.round(f * PANEL);
  }
}

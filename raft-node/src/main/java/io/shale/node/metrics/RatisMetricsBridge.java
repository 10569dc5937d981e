package io.shale.node.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.impl.RatisMetricRegistryImpl;
import org.apache.ratis.thirdparty.com.codahale.metrics.Counter;
import org.apache.ratis.thirdparty.com.codahale.metrics.Metric;
import org.apache.ratis.thirdparty.com.codahale.metrics.Timer;

/**
 * Ratis's own metrics (Dropwizard meters inside its default metrics implementation) exposed as
 * Micrometer meters named {@code ratis.<registry prefix>.<name>}: gauges as gauges, counters as
 * counters, timers as a count and mean and P99 gauges in seconds. Ratis creates registries as it
 * goes, so {@link #refresh} (called before each scrape) registers what appeared since.
 */
public final class RatisMetricsBridge {
  private final MeterRegistry registry;
  private final Set<String> bridged = ConcurrentHashMap.newKeySet();

  public RatisMetricsBridge(MeterRegistry registry) {
    this.registry = registry;
  }

  public void refresh() {
    for (RatisMetricRegistry r : MetricRegistries.global().getMetricRegistries()) {
      if (!(r instanceof RatisMetricRegistryImpl impl)) {
        continue;
      }
      String prefix = "ratis." + r.getMetricRegistryInfo().getPrefix();
      for (Map.Entry<String, Metric> e :
          impl.getDropWizardMetricRegistry().getMetrics().entrySet()) {
        String name = sanitize(prefix + "." + e.getKey());
        if (!bridged.add(name)) {
          continue;
        }
        Metric m = e.getValue();
        if (m instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Gauge<?> g) {
          Gauge.builder(name, g, RatisMetricsBridge::number).register(registry);
        } else if (m instanceof Counter c) {
          FunctionCounter.builder(name, c, Counter::getCount).register(registry);
        } else if (m instanceof Timer t) {
          Gauge.builder(name + ".count", t, Timer::getCount).register(registry);
          Gauge.builder(name + ".mean.seconds", t, x -> x.getSnapshot().getMean() / 1e9)
              .register(registry);
          Gauge.builder(name + ".p99.seconds", t, x -> x.getSnapshot().get99thPercentile() / 1e9)
              .register(registry);
        }
      }
    }
  }

  private static double number(org.apache.ratis.thirdparty.com.codahale.metrics.Gauge<?> g) {
    Object v = g.getValue();
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  /** Micrometer names are dotted lower-case words; Ratis's contain ids and dashes. */
  private static String sanitize(String name) {
    return name.replaceAll("[^A-Za-z0-9.]", "_");
  }
}

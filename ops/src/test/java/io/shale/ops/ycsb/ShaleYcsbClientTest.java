package io.shale.ops.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.testing.ShaleCluster;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import site.ycsb.ByteIterator;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * The YCSB binding's five operations against a real 3-node cluster, as YCSB's threads call them.
 */
class ShaleYcsbClientTest {
  @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  private static ShaleYcsbClient client() throws Exception {
    ShaleYcsbClient db = new ShaleYcsbClient();
    Properties p = new Properties();
    p.setProperty("shale.endpoints", String.join(",", cluster.endpoints()));
    db.setProperties(p);
    db.init();
    return db;
  }

  private static Map<String, ByteIterator> fields(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return StringByteIterator.getByteIteratorMap(m);
  }

  @Test
  void insertReadUpdateScanDelete() throws Exception {
    ShaleYcsbClient a = client();
    ShaleYcsbClient b = client(); // a second thread's instance shares the connection
    for (int i = 0; i < 5; i++) {
      assertThat(a.insert("usertable", "user" + i, fields("field0", "a" + i, "field1", "b" + i)))
          .isEqualTo(Status.OK);
    }
    Map<String, ByteIterator> row = new HashMap<>();
    assertThat(b.read("usertable", "user3", Set.of("field1"), row)).isEqualTo(Status.OK);
    assertThat(StringByteIterator.getStringMap(row)).isEqualTo(Map.of("field1", "b3"));

    assertThat(b.update("usertable", "user3", fields("field0", "new"))).isEqualTo(Status.OK);
    row.clear();
    assertThat(a.read("usertable", "user3", null, row)).isEqualTo(Status.OK);
    assertThat(StringByteIterator.getStringMap(row))
        .isEqualTo(Map.of("field0", "new", "field1", "b3"));

    Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
    assertThat(a.scan("usertable", "user1", 3, Set.of("field1"), rows)).isEqualTo(Status.OK);
    assertThat(rows).hasSize(3);
    assertThat(
            rows.stream().map(r -> new String(r.get("field1").toArray(), StandardCharsets.UTF_8)))
        .containsExactly("b1", "b2", "b3");

    assertThat(a.delete("usertable", "user2")).isEqualTo(Status.OK);
    assertThat(b.read("usertable", "user2", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
    a.cleanup();
    // The shared client stays open for the instance still using it.
    assertThat(b.read("usertable", "user4", null, new HashMap<>())).isEqualTo(Status.OK);
    b.cleanup();
  }
}

package io.shale.node.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.shale.node.auth.proto.StoredPermission;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * A request's range is allowed exactly when every key in it lies in some granted range. Checked
 * against brute force over a small key universe: every range bound is in the universe, so a gap
 * between granted ranges always contains a universe key (its first key), and a range open to the
 * end is covered past the universe's last key only by a grant open to the end.
 */
class GrantsProperties {
  private static final List<String> UNIVERSE = universe();
  private static final String LAST = "cc";

  private static List<String> universe() {
    List<String> out = new ArrayList<>(List.of(""));
    for (String a : List.of("a", "b", "c")) {
      out.add(a);
      for (String b : List.of("a", "b", "c")) {
        out.add(a + b);
      }
    }
    return out;
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  record Grant(int type, String start, String end) {
    boolean contains(String key, boolean write) {
      boolean typeOk =
          write
              ? type == Grants.WRITE || type == Grants.READWRITE
              : type == Grants.READ || type == Grants.READWRITE;
      return typeOk
          && Arrays.compareUnsigned(b(start), b(key)) <= 0
          && (end.isEmpty() || Arrays.compareUnsigned(b(key), b(end)) < 0);
    }
  }

  @Provide
  Arbitrary<List<Grant>> grants() {
    return Combinators.combine(
            Arbitraries.integers().between(0, 3),
            Arbitraries.of(UNIVERSE),
            Arbitraries.of(UNIVERSE))
        .as(Grant::new)
        .filter(g -> g.end().isEmpty() || Arrays.compareUnsigned(b(g.start()), b(g.end())) < 0)
        .list()
        .ofMaxSize(5);
  }

  @Provide
  Arbitrary<String> key() {
    return Arbitraries.of(UNIVERSE);
  }

  @Property(tries = 3000)
  void aRangeIsAllowedExactlyWhenEveryKeyInItIsGranted(
      @ForAll("grants") List<Grant> given,
      @ForAll("key") String start,
      @ForAll("key") String end,
      @ForAll boolean write) {
    byte[] s = b(start);
    byte[] e = end.isEmpty() ? null : b(end);
    if (e != null && Arrays.compareUnsigned(s, e) >= 0) {
      return;
    }
    Grants grants =
        Grants.of(
            given.stream()
                .map(
                    g ->
                        StoredPermission.newBuilder()
                            .setType(g.type())
                            .setStart(ByteString.copyFromUtf8(g.start()))
                            .setEnd(ByteString.copyFromUtf8(g.end()))
                            .build())
                .toList());
    boolean expected =
        UNIVERSE.stream()
            .filter(
                k ->
                    Arrays.compareUnsigned(s, b(k)) <= 0
                        && (e == null || Arrays.compareUnsigned(b(k), e) < 0))
            .allMatch(k -> given.stream().anyMatch(g -> g.contains(k, write)));
    if (e == null) {
      expected &= given.stream().anyMatch(g -> g.end().isEmpty() && g.contains(LAST, write));
    }
    assertThat(write ? grants.mayWrite(s, e) : grants.mayRead(s, e))
        .as("%s, [%s, %s), write %s", given, start, end, write)
        .isEqualTo(expected);
  }

  @Test
  void adminIsItsOwnGrantAndNoGrantsAllowNothing() {
    assertThat(Grants.NONE.mayRead(b("a"), b("b"))).isFalse();
    Grants admin = Grants.of(List.of(StoredPermission.newBuilder().setType(Grants.ADMIN).build()));
    assertThat(admin.admin()).isTrue();
    assertThat(admin.mayRead(b("a"), b("b"))).isFalse();
  }
}

package io.shale.node.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every form of unencrypted PEM key a node accepts, and the refusals of the rest. */
class PemKeysTest {
  private static final Path FILE = Path.of("key.pem");

  private static KeyPair generate(String algorithm) throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
    switch (algorithm) {
      case "EC" -> g.initialize(new ECGenParameterSpec("secp256r1"));
      case "RSA" -> g.initialize(2048);
      default -> {}
    }
    return g.generateKeyPair();
  }

  private static byte[] pkcs8(PrivateKey key) {
    return ("-----BEGIN PRIVATE KEY-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(key.getEncoded())
            + "\n-----END PRIVATE KEY-----\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  @ParameterizedTest
  @ValueSource(strings = {"EC", "RSA", "Ed25519", "Ed448"})
  void pkcs8KeysOfEveryAlgorithmReadBackEqual(String algorithm) throws Exception {
    PrivateKey key = generate(algorithm).getPrivate();
    PrivateKey read = PemKeys.read("tls.key_file", FILE, pkcs8(key));
    assertThat(read.getEncoded()).isEqualTo(key.getEncoded());
  }

  /**
   * The older forms openssl writes (SEC1 for EC, PKCS#1 for RSA; testdata/keys) go through
   * BouncyCastle and give the same key as their PKCS#8 twins read by the JDK.
   */
  @ParameterizedTest
  @ValueSource(strings = {"ec-sec1", "rsa-pkcs1"})
  void sec1AndPkcs1KeysReadAsTheirPkcs8Twins(String name) throws Exception {
    PrivateKey old = PemKeys.read("tls.key_file", FILE, testdata(name + ".pem"));
    PrivateKey twin = PemKeys.read("tls.key_file", FILE, testdata(name + ".pkcs8.pem"));
    assertThat(old.getAlgorithm()).isEqualTo(twin.getAlgorithm());
    if (old instanceof java.security.interfaces.ECPrivateKey ec) {
      assertThat(ec.getS()).isEqualTo(((java.security.interfaces.ECPrivateKey) twin).getS());
    } else {
      assertThat(((java.security.interfaces.RSAPrivateKey) old).getPrivateExponent())
          .isEqualTo(((java.security.interfaces.RSAPrivateKey) twin).getPrivateExponent());
    }
  }

  private static byte[] testdata(String name) throws Exception {
    try (var in = PemKeysTest.class.getResourceAsStream("/testdata/keys/" + name)) {
      return in.readAllBytes();
    }
  }

  @Test
  void damagedKeysAreRefusedNamingTheFile() throws Exception {
    byte[] good = pkcs8(generate("EC").getPrivate());
    String text = new String(good, StandardCharsets.US_ASCII);
    assertThatThrownBy(
            () ->
                PemKeys.read(
                    "tls.key_file",
                    FILE,
                    text.replace("-----END PRIVATE KEY-----", "")
                        .getBytes(StandardCharsets.US_ASCII)))
        .hasMessage(
            "tls.key_file: key.pem is not a PEM private key: no -----END PRIVATE KEY----- line");
    String body = text.substring(text.indexOf('\n') + 1, text.indexOf("-----END"));
    String flipped =
        text.replace(body, body.replace(body.charAt(40), body.charAt(40) == 'A' ? 'B' : 'A'));
    assertThatThrownBy(
            () -> PemKeys.read("tls.key_file", FILE, flipped.getBytes(StandardCharsets.US_ASCII)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("tls.key_file: key.pem holds no PKCS#8 private key of EC, RSA");
    assertThatThrownBy(
            () ->
                PemKeys.read(
                    "tls.key_file", FILE, "not a key at all".getBytes(StandardCharsets.US_ASCII)))
        .hasMessage(
            "tls.key_file: key.pem holds no unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1)");
    assertThatThrownBy(
            () ->
                PemKeys.read(
                    "tls.key_file",
                    FILE,
                    text.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
                        .getBytes(StandardCharsets.US_ASCII)))
        .hasMessageStartingWith(
            "tls.key_file: key.pem holds an encrypted private key; a node reads unencrypted"
                + " PKCS#8 only");
  }

  /**
   * The point of the JDK path: a PKCS#8 key loads no BouncyCastle class (whose signed jar costs a
   * node's start about 2 s). Checked in a class loader of its own, so that other tests' loads do
   * not count, which records every class it is asked for.
   */
  @Test
  void aPkcs8KeyLoadsNoBouncyCastleClass() throws Exception {
    byte[] pem = pkcs8(generate("EC").getPrivate());
    List<String> asked = new ArrayList<>();
    URL[] path = {
      PemKeys.class.getProtectionDomain().getCodeSource().getLocation(),
      JcaPEMWriter.class.getProtectionDomain().getCodeSource().getLocation(),
      org.bouncycastle.asn1.ASN1Object.class.getProtectionDomain().getCodeSource().getLocation()
    };
    try (URLClassLoader loader =
        new URLClassLoader(path, ClassLoader.getPlatformClassLoader()) {
          @Override
          protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (asked) {
              asked.add(name);
            }
            return super.loadClass(name, resolve);
          }
        }) {
      Class<?> keys = Class.forName(PemKeys.class.getName(), true, loader);
      Object read =
          keys.getMethod("read", String.class, Path.class, byte[].class)
              .invoke(null, "tls.key_file", FILE, pem);
      assertThat(read).isInstanceOf(PrivateKey.class);
    }
    assertThat(asked).contains(PemKeys.class.getName());
    assertThat(asked).noneMatch(n -> n.startsWith("org.bouncycastle"));
  }
}

/**
 * Test support for applications that use Shale: {@link io.shale.testing.ShaleCluster}, a JUnit 5
 * extension running a real cluster in the test's JVM. Depend on it in test scope.
 */
package io.shale.testing;

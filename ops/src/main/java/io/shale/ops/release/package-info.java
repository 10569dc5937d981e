/**
 * The release layout a node runs from (the package, or the copy {@code mvn package} stages under
 * ops/target): its Java runtime, its jars in class-path order, and the ahead-of-time cache made for
 * exactly those, with the fingerprint that says whether the cache still matches them.
 */
package io.shale.ops.release;

/**
 * The Java SDK. {@link io.shale.client.ShaleClient} (made by its builder) reads and writes keys,
 * scans ranges page by page ({@link io.shale.client.Scan}), writes atomic batches ({@link
 * io.shale.client.Batch}) and compare-and-sets ({@link io.shale.client.Expectation}); {@link
 * io.shale.client.ClusterAdmin} administers the cluster. Failures arrive as {@link
 * io.shale.client.ShaleException} subclasses named for what the caller can do.
 *
 * <p>Writes carry a request id the server deduplicates, so the client retries them safely; the
 * trailers that tell the client why a call failed are in {@link io.shale.client.ErrorTrailers}. The
 * wire messages ({@code io.shale.client.proto}) are generated from {@code shale/v1/*.proto}.
 */
package io.shale.client;

/**
 * The Java SDK: {@link io.shale.client.ShaleClient} and its builder, typed exceptions, paged
 * scans. Writes carry a request id the server deduplicates, so the client retries them safely.
 */
package io.shale.client;

/**
 * The Java client SDK ({@code ShaleClient}) and, in {@code src/main/proto}, the public gRPC API it
 * shares with the server. Not built yet.
 */
package io.shale.client;

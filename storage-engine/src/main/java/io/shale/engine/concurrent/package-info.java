/**
 * Concurrency building blocks shared by the engine and the node: named daemon thread factories, and
 * the stop-or-fail state of background work. Nothing here knows about storage.
 */
package io.shale.engine.concurrent;

/**
 * Concurrency building blocks shared by the engine and the node: named daemon thread factories.
 * Nothing here knows about storage.
 */
package io.shale.engine.concurrent;

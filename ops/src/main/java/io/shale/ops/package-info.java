/**
 * Operations tooling: the engine demo ({@code demo}), the engine benchmark ({@code bench}), the
 * seed workload ({@code seed}), and what their command-line entry points share.
 */
package io.shale.ops;

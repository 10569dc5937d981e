/**
 * The seed's workload ({@code ../shared/seed/notes-from-compaction-hell.txt}) as a reproducible
 * request stream, the first piece of the seed benchmark (issue 4): 80% point reads, 15% range
 * scans of 10 to 100 keys, 5% writes (overwrites, inserts, and deletes concentrated on hot key
 * ranges), long-tailed value sizes and zipfian key popularity.
 */
package io.shale.ops.seed;

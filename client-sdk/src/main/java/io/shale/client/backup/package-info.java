/**
 * Backups: taking one from a node ({@link io.shale.client.backup.BackupSave}, full or sharing
 * unchanged files with an earlier one), the directory's manifest ({@link
 * io.shale.client.backup.BackupManifest}) and checking every byte of it ({@link
 * io.shale.client.backup.BackupVerifier}). A backup directory is {@code BACKUP} (the manifest,
 * written last) and {@code files/} (the node's checkpoint: engine tables, blob files, manifest).
 * Restoring one into a new cluster is the node's job ({@code shale-node restore}).
 */
package io.shale.client.backup;

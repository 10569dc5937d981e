/**
 * The audit trail: every administrative and security action on a node's client API (membership,
 * leadership, snapshots, compactions, users and roles, authentications, refused calls) as one JSON
 * line each, with who, what, when and the outcome ({@link io.shale.node.audit.AuditTrail}, written
 * by {@link io.shale.node.audit.AuditLog}).
 */
package io.shale.node.audit;
